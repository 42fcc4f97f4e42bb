//! CSV files the console writes (the device table, the downlink and binding lists), one way:
//! every cell that starts like a formula made inert, the file written beside its target and
//! renamed over it at the end, so a failure leaves the file the user had (or none), never half a
//! file.

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use dcs_api::Error;

/// A cell a spreadsheet will not run: text from the service that starts like a formula (`=`,
/// `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, which spreadsheets show as
/// text and do not evaluate.
pub fn inert_cell(cell: String) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell
    }
}

/// A CSV file being written: rows go to a temporary file beside `path`; [`CsvFile::finish`]
/// renames it over `path`. Dropped unfinished, the temporary file is removed.
pub struct CsvFile {
    path: PathBuf,
    writer: csv::Writer<BufWriter<tempfile::NamedTempFile>>,
    rows: u32,
}

impl CsvFile {
    /// Starts `path` with its header line.
    pub fn create(path: &Path, header: &[&str]) -> Result<CsvFile, Error> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let file = tempfile::NamedTempFile::new_in(dir).map_err(|e| local(path, e))?;
        let mut writer = csv::Writer::from_writer(BufWriter::new(file));
        writer.write_record(header).map_err(|e| csv_error(path, e))?;
        Ok(CsvFile { path: path.to_owned(), writer, rows: 0 })
    }

    /// One row; every cell made inert.
    pub fn row<I: IntoIterator<Item = String>>(&mut self, cells: I) -> Result<(), Error> {
        let cells: Vec<String> = cells.into_iter().map(inert_cell).collect();
        self.writer.write_record(&cells).map_err(|e| csv_error(&self.path, e))?;
        self.rows += 1;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Flushes, syncs and renames the file over its target; answers the number of rows.
    pub fn finish(self) -> Result<u32, Error> {
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(|e| local(&path, e.into_error()))?
            .into_inner()
            .map_err(|e| local(&path, e.into_error()))?;
        file.as_file().sync_all().map_err(|e| local(&path, e))?;
        file.persist(&path).map_err(|e| local(&path, e.error))?;
        Ok(self.rows)
    }
}

/// Writes a file the same way as [`CsvFile`] (beside its target, synced, renamed over it), its
/// content written by `fill`; a failure leaves what was there. For the console's other files
/// (reports, JSON Lines exports).
pub fn write_replacing(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Error> {
    use std::io::Write as _;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file = tempfile::NamedTempFile::new_in(dir).map_err(|e| local(path, e))?;
    let mut out = BufWriter::new(file);
    fill(&mut out).map_err(|e| local(path, e))?;
    out.flush().map_err(|e| local(path, e))?;
    let file = out.into_inner().map_err(|e| local(path, e.into_error()))?;
    file.as_file().sync_all().map_err(|e| local(path, e))?;
    file.persist(path).map_err(|e| local(path, e.error))?;
    Ok(())
}

fn local(path: &Path, source: std::io::Error) -> Error {
    Error::LocalFile { path: path.display().to_string(), source }
}

fn csv_error(path: &Path, e: csv::Error) -> Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => local(path, io),
        other => local(path, std::io::Error::other(format!("{other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_file_replaces_the_target_and_an_unfinished_one_leaves_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old\n").unwrap();
        {
            let mut f = CsvFile::create(&path, &["a", "b"]).unwrap();
            f.row(["=1+1".to_owned(), "x,y".to_owned()]).unwrap();
            // Dropped without finish: the old file stays, no temporary file is left.
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut f = CsvFile::create(&path, &["a", "b"]).unwrap();
        f.row(["=1+1".to_owned(), "x,y".to_owned()]).unwrap();
        f.row(["@SUM(A1)".to_owned(), "plain".to_owned()]).unwrap();
        assert_eq!(f.finish().unwrap(), 2);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n'=1+1,\"x,y\"\n'@SUM(A1),plain\n");
    }

    #[test]
    fn a_folder_that_does_not_exist_is_a_local_file_error_naming_the_path() {
        let e = CsvFile::create(Path::new("/nonexistent-dir-dcs/x.csv"), &["a"]).err().unwrap();
        assert!(matches!(e, Error::LocalFile { ref path, .. } if path.contains("nonexistent-dir-dcs")), "{e}");
    }
}
