//! Downlink lists written as CSV.

use dcs_api::{Client, Error};

use super::listing::list;
use super::{DownlinkPageRequest, DownlinkView};

/// Most rows one CSV export writes.
pub const MAX_EXPORT_ROWS: u32 = 1_000_000;

/// The columns of a downlink list's CSV.
pub const CSV_HEADER: [&str; 16] = [
    "id",
    "kind",
    "status",
    "deviceId",
    "deviceName",
    "deviceUuid",
    "imei",
    "devEui",
    "externalReference",
    "failureReason",
    "retryCount",
    "retryLimit",
    "dryRun",
    "feedbackTimeout",
    "createdAt",
    "modifiedAt",
];

/// One downlink as a CSV row, its device named by `device`.
pub fn csv_row(d: &DownlinkView, device: &crate::devices::DeviceLabel) -> Vec<String> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    let n = |v: Option<u32>| v.map(|n| n.to_string()).unwrap_or_default();
    vec![
        d.id.clone(),
        d.kind.as_str().to_owned(),
        d.status.clone(),
        d.device.clone(),
        o(&device.name),
        device.uuid.map(|u| u.to_string()).unwrap_or_default(),
        o(&device.imei),
        o(&device.dev_eui),
        o(&d.external_reference),
        o(&d.failure_reason),
        n(d.retry_count),
        n(d.retry_limit),
        d.dry_run.map(|b| b.to_string()).unwrap_or_default(),
        o(&d.feedback_timeout),
        o(&d.created_at),
        o(&d.modified_at),
    ]
}

/// Writes every downlink the request's filters and sort give (every page) to `path` as CSV,
/// each device named from `names`; answers the number of rows.
pub async fn export_csv(
    client: &Client,
    req: &DownlinkPageRequest,
    names: &crate::devices::Directory,
    path: &std::path::Path,
) -> Result<u32, Error> {
    let mut req = DownlinkPageRequest { next: None, ..req.clone() };
    let mut file = crate::csv_file::CsvFile::create(path, &CSV_HEADER)?;
    loop {
        let page = list(client, &req).await?;
        for d in &page.items {
            if file.rows() >= MAX_EXPORT_ROWS {
                return Err(Error::InvalidInput {
                    field: "filters".into(),
                    rule: format!("match more than {MAX_EXPORT_ROWS} downlinks; narrow them"),
                });
            }
            file.row(csv_row(d, &names.label(&d.device)))?;
        }
        match page.next {
            Some(next) => req.next = Some(next),
            None => break,
        }
    }
    file.finish()
}
