//! The client's side of `bench/client.sh` (a benchmark, not a test): one operation per run,
//! timed, with the process's peak memory, printed as one JSON line.
//!
//!   transfer <base-url> <client-id> new-package          -> a fresh package id
//!   transfer <base-url> <client-id> upload <package> <file>
//!   transfer <base-url> <client-id> upload-two-pass <package> <file>
//!   transfer <base-url> <client-id> scan <page-size>
//!   transfer hash <file>
//!
//! `upload` is what the client does by default (one read: the checksum computed while sending,
//! after the file); `upload-two-pass` what it does for a service that wants the checksum first
//! (a hash pass, then the send with the checksum before the file). `hash` needs no service.
//! The secret comes from DCS_CLIENT_SECRET.

use std::path::Path;
use std::time::Instant;

use dcs_api::files::{sha256_file, KnownChecksum, Transfer, UploadOptions};
use dcs_api::firmware::{ModuleFilter, NewPackage, StateFilter};
use dcs_api::{Client, ClientConfig, Secret};
use futures::TryStreamExt;

/// `VmRSS` and `VmHWM` (peak) of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, op, file] = args.as_slice() {
        if op == "hash" {
            let started = Instant::now();
            let (sha256, bytes) = sha256_file(Path::new(file), &Transfer::default()).await?;
            let seconds = started.elapsed().as_secs_f64();
            let (_, peak) = memory_kib();
            let out = serde_json::json!({ "op": "hash", "sha256": sha256, "bytes": bytes, "seconds": seconds, "rss_peak_kib": peak });
            println!("{out}");
            return Ok(());
        }
    }
    let [_, base, client_id, op, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: transfer <base-url> <client-id> new-package|upload <package> <file>|upload-two-pass <package> <file>|scan <page-size>, or transfer hash <file>".into()
        );
    };
    let secret = std::env::var("DCS_CLIENT_SECRET")?;
    let client = Client::new(ClientConfig::new(base, base, client_id, Secret::new(secret))?)?;
    client.check_auth().await?;
    let (rss_before, _) = memory_kib();
    let started = Instant::now();
    let result = match (op.as_str(), rest) {
        ("new-package", []) => {
            let module = client
                .firmware()
                .modules_page(&ModuleFilter { limit: Some(1), ..Default::default() })
                .await?
                .0
                .items
                .remove(0);
            let version = format!("bench-{}", uuid::Uuid::new_v4().simple());
            let p = client
                .firmware()
                .create_package(&NewPackage::new(module.device_specification_id, module.id, version))
                .await?;
            println!("{}", p.id);
            return Ok(());
        }
        ("upload", [package, file]) => {
            let attrs = client
                .firmware()
                .upload_firmware_file(
                    package.parse()?,
                    Path::new(file),
                    &UploadOptions::default(),
                    &Transfer::default(),
                )
                .await?;
            serde_json::json!({ "op": "upload", "name": attrs.name, "bytes": std::fs::metadata(file)?.len() })
        }
        ("upload-two-pass", [package, file]) => {
            let path = Path::new(file);
            let modified = std::fs::metadata(path)?.modified().ok();
            let (sha256, size) = sha256_file(path, &Transfer::default()).await?;
            let options =
                UploadOptions { checksum: Some(KnownChecksum { sha256, size, modified }), ..Default::default() };
            let attrs =
                client.firmware().upload_firmware_file(package.parse()?, path, &options, &Transfer::default()).await?;
            serde_json::json!({ "op": "upload-two-pass", "name": attrs.name, "bytes": size })
        }
        ("scan", [page]) => {
            let filter = StateFilter { limit: Some(page.parse()?), ..Default::default() };
            let n = client.firmware().states(&filter)?.try_fold(0u64, |n, _| async move { Ok(n + 1) }).await?;
            serde_json::json!({ "op": "scan", "states": n })
        }
        _ => return Err(format!("unknown operation {op}").into()),
    };
    let elapsed = started.elapsed().as_secs_f64();
    let (_, peak) = memory_kib();
    let mut out = result;
    out["seconds"] = serde_json::json!(elapsed);
    out["rss_before_kib"] = serde_json::json!(rss_before);
    out["rss_peak_kib"] = serde_json::json!(peak);
    out["rss_growth_kib"] = serde_json::json!(peak.saturating_sub(rss_before));
    println!("{out}");
    Ok(())
}
