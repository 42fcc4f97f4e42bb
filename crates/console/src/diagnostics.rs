//! What an operator sends when something goes wrong: the app's log files, and a diagnostics
//! bundle (a zip of the logs, the versions, the profiles without any secret, and the fleet
//! database's figures), written by the app's "Save diagnostics…" and by `dcs diagnostics`.
//!
//! The logs are the app's tracing output, redacted where it is written (a secret or token never
//! reaches a log line: the client's types print none), in daily files under the data folder's
//! `logs`, the newest seven kept. The bundle adds nothing that could hold a secret: the profiles
//! are written from their parsed form (the keychain is never read), the fleet database only as
//! counts and times.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::fleet::FleetDb;
use crate::{ConfigStore, Error};

/// Log files kept (one a day).
pub const LOG_FILES_KEPT: usize = 7;
/// The most of the logs a bundle carries: the newest files first, the older cut.
pub const BUNDLE_LOG_BYTES: u64 = 16 * 1024 * 1024;
/// The prefix of the app's log files (`dcs-console.YYYY-MM-DD.log`).
const LOG_PREFIX: &str = "dcs-console";

/// The log folder of the data folder `data_dir`: `logs` in it.
pub fn log_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("logs")
}

/// A failure reading or writing `path`, in the one shape of local file errors.
fn file_error(path: &Path, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    let source = match e.into().downcast::<std::io::Error>() {
        Ok(io) => *io,
        Err(other) => std::io::Error::other(other),
    };
    Error::Api(dcs_api::Error::LocalFile { path: path.display().to_string(), source })
}

/// A writer of daily log files in `dir` (created if missing), the newest [`LOG_FILES_KEPT`]
/// kept. It writes each line as it comes (no buffer a crash would lose).
pub fn log_writer(dir: &Path) -> Result<tracing_appender::rolling::RollingFileAppender, Error> {
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(LOG_PREFIX)
        .filename_suffix("log")
        .max_log_files(LOG_FILES_KEPT)
        .build(dir)
        .map_err(|e| file_error(dir, e))?;
    Ok(appender)
}

/// Who writes a bundle, for its `about.json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct About {
    /// `dcs-console` (the app) or `dcs` (the command line).
    pub program: String,
    pub version: String,
    /// The active profile's name and where it points, when one is open.
    pub profile: Option<String>,
    pub base_url: Option<String>,
    pub acting_for: Option<String>,
}

/// What a bundle holds: its entries and their sizes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BundleSummary {
    pub path: String,
    pub entries: Vec<String>,
    pub bytes: u32,
}

/// Writes the diagnostics bundle of the data folder `data_dir` to `out` (replacing it):
/// `about.json` (versions, system, the
/// active profile), `profiles.toml` (the profiles file as parsed: no secret is ever in it),
/// `fleet.json` (the fleet database's size, its scopes' counts and times), `data-folder.json`
/// (the data folder's files and sizes) and `logs/` (the newest log files, at most
/// [`BUNDLE_LOG_BYTES`], a file over what is left cut to its end).
pub fn write_bundle(
    out: &Path,
    about: &About,
    config: &ConfigStore,
    fleet: Option<&FleetDb>,
    data_dir: Option<&Path>,
) -> Result<BundleSummary, Error> {
    write_capped(out, about, config, fleet, data_dir, BUNDLE_LOG_BYTES)
}

fn write_capped(
    out: &Path,
    about: &About,
    config: &ConfigStore,
    fleet: Option<&FleetDb>,
    data_dir: Option<&Path>,
    log_bytes: u64,
) -> Result<BundleSummary, Error> {
    let file = std::fs::File::create(out).map_err(|e| file_error(out, e))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut entries = Vec::new();
    let mut add = |zip: &mut zip::ZipWriter<std::fs::File>, name: &str, bytes: &[u8]| -> Result<(), Error> {
        zip.start_file(name, options).map_err(|e| file_error(out, e))?;
        zip.write_all(bytes).map_err(|e| file_error(out, e))?;
        entries.push(name.to_owned());
        Ok(())
    };

    let system = serde_json::json!({
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_owned()),
        "osRelease": os_release(),
    });
    let about_json = serde_json::json!({
        "about": about,
        "system": system,
        "writtenAt": time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).ok(),
        "dataFolder": data_dir,
        "configFile": config.path(),
    });
    add(&mut zip, "about.json", &pretty(&about_json))?;

    // From the parsed profiles: a key the file has that a profile has not (a secret typed into
    // it by hand) is not carried. An unreadable file is only said to be so: a parser's message
    // quotes the line it stopped at.
    let profiles = match config.load() {
        Ok(c) => toml::to_string_pretty(&c).unwrap_or_else(|_| "# the profiles could not be written out\n".to_owned()),
        Err(_) => "# the profiles file could not be read (its text is left out)\n".to_owned(),
    };
    add(&mut zip, "profiles.toml", profiles.as_bytes())?;

    let figures = match fleet {
        Some(db) => db.figures().unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })),
        None => serde_json::json!({ "error": "no fleet database is open" }),
    };
    add(&mut zip, "fleet.json", &pretty(&figures))?;

    let listing: Vec<serde_json::Value> = data_dir
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let meta = e.metadata().ok();
            serde_json::json!({
                "name": e.file_name().to_string_lossy(),
                "bytes": meta.as_ref().filter(|m| m.is_file()).map(|m| m.len()),
                "folder": meta.as_ref().is_some_and(|m| m.is_dir()),
            })
        })
        .collect();
    add(&mut zip, "data-folder.json", &pretty(&serde_json::Value::Array(listing)))?;

    let mut left = log_bytes;
    for (path, len) in data_dir.map(|d| log_files(&log_dir(d))).unwrap_or_default() {
        if left == 0 {
            break;
        }
        let take = len.min(left);
        let mut f = std::fs::File::open(&path).map_err(|e| file_error(&path, e))?;
        f.seek(SeekFrom::Start(len - take)).map_err(|e| file_error(&path, e))?;
        let mut bytes = Vec::with_capacity(take as usize);
        f.take(take).read_to_end(&mut bytes).map_err(|e| file_error(&path, e))?;
        let name = format!("logs/{}", path.file_name().unwrap_or_default().to_string_lossy());
        add(&mut zip, &name, &bytes)?;
        left -= take;
    }

    let file = zip.finish().map_err(|e| file_error(out, e))?;
    let bytes = file.metadata().map(|m| m.len()).unwrap_or_default();
    Ok(BundleSummary { path: out.display().to_string(), entries, bytes: bytes.min(u32::MAX as u64) as u32 })
}

/// The app's log files in `dir`, newest first, with their sizes.
fn log_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut files: Vec<(PathBuf, u64, std::time::SystemTime)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(LOG_PREFIX))
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((e.path(), meta.len(), meta.modified().unwrap_or(std::time::UNIX_EPOCH)))
        })
        .collect();
    files.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| b.0.cmp(&a.0)));
    files.into_iter().map(|(p, len, _)| (p, len)).collect()
}

/// `PRETTY_NAME` of /etc/os-release, where there is one.
fn os_release() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_owned())
}

fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(v).expect("a JSON value serializes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_zip(path: &Path) -> Vec<(String, Vec<u8>)> {
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        (0..zip.len())
            .map(|i| {
                let mut f = zip.by_index(i).unwrap();
                let mut bytes = Vec::new();
                f.read_to_end(&mut bytes).unwrap();
                (f.name().unwrap().into_owned(), bytes)
            })
            .collect()
    }

    fn about() -> About {
        About {
            program: "dcs-console".into(),
            version: "0.1.0".into(),
            profile: Some("prod".into()),
            base_url: Some("https://dcs.example".into()),
            acting_for: None,
        }
    }

    /// The bundle holds the parts it lists, the newest logs first within the cap (an older file
    /// cut to its end), the profiles without a key typed into the file by hand, and the fleet's
    /// figures.
    #[test]
    fn a_bundle_holds_the_logs_newest_first_the_profiles_and_the_fleets_figures() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let logs = log_dir(&data);
        std::fs::create_dir_all(&logs).unwrap();
        let old = logs.join("dcs-console.2026-11-25.log");
        std::fs::write(&old, format!("{}the end of the old one\n", "x".repeat(5000))).unwrap();
        let new = logs.join("dcs-console.2026-11-26.log");
        std::fs::write(&new, "the newest\n").unwrap();
        let t = std::time::SystemTime::now();
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(t - std::time::Duration::from_secs(86400))
            .unwrap();
        std::fs::File::options().write(true).open(&new).unwrap().set_modified(t).unwrap();
        std::fs::write(logs.join("unrelated.txt"), "not a log").unwrap();

        let config = ConfigStore::at(dir.path().join("config.toml"));
        std::fs::write(
            config.path(),
            "defaultProfile = \"prod\"\n[[profile]]\nname = \"prod\"\nbaseUrl = \"https://dcs.example\"\n\
             clientId = \"key-1\"\nclientSecret = \"typed-in-by-hand-3f9a\"\n",
        )
        .unwrap();
        let fleet = FleetDb::open(&data.join("fleet.sqlite")).unwrap();

        let out = dir.path().join("bundle.zip");
        let summary = write_capped(&out, &about(), &config, Some(&fleet), Some(&data), 40).unwrap();
        let entries = read_zip(&out);
        let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "about.json",
                "profiles.toml",
                "fleet.json",
                "data-folder.json",
                "logs/dcs-console.2026-11-26.log",
                "logs/dcs-console.2026-11-25.log"
            ]
        );
        assert_eq!(summary.entries, names);
        let text = |name: &str| String::from_utf8(entries.iter().find(|(n, _)| n == name).unwrap().1.clone()).unwrap();
        assert_eq!(text("logs/dcs-console.2026-11-26.log"), "the newest\n");
        assert_eq!(
            text("logs/dcs-console.2026-11-25.log"),
            "xxxxxxthe end of the old one\n",
            "its last 29 bytes: 40 less the newest's 11"
        );
        let profiles = text("profiles.toml");
        assert!(profiles.contains("key-1") && profiles.contains("https://dcs.example"), "{profiles}");
        assert!(
            !entries.iter().any(|(_, b)| String::from_utf8_lossy(b).contains("typed-in-by-hand")),
            "the hand-typed secret"
        );
        let about: serde_json::Value = serde_json::from_str(&text("about.json")).unwrap();
        assert_eq!(about["about"]["profile"], "prod");
        let figures: serde_json::Value = serde_json::from_str(&text("fleet.json")).unwrap();
        assert!(figures["bytes"].as_i64().unwrap() > 0 && figures["scopes"].is_array(), "{figures}");
    }

    /// A profiles file that does not parse is left out entirely: the parser's message would
    /// quote the line it stopped at, which may hold anything.
    #[test]
    fn an_unreadable_profiles_file_is_left_out_not_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let config = ConfigStore::at(dir.path().join("config.toml"));
        std::fs::write(config.path(), "[[profile]\nclient_secret = \"quoted-by-a-parser-7c1e\n").unwrap();
        let out = dir.path().join("bundle.zip");
        write_bundle(&out, &about(), &config, None, None).unwrap();
        let entries = read_zip(&out);
        assert!(entries.iter().all(|(_, b)| !String::from_utf8_lossy(b).contains("quoted-by-a-parser")));
        let profiles = &entries.iter().find(|(n, _)| n == "profiles.toml").unwrap().1;
        assert!(String::from_utf8_lossy(profiles).contains("could not be read"));
    }
}
