//! Where an upload's checksum goes (crates/api/src/files.rs, module doc): after the file and
//! computed while sending (one read) by default; first, after a hash pass, once the service
//! refused it after the file. Against the simulator and against a small hand-made service that
//! records the parts as they arrive and can refuse a checksum after the file.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::files::{sha256_file, KnownChecksum, Transfer, UploadOptions};
use dcs_api::firmware::NewPackage;
use dcs_api::{Client, ErrorCode};
use dcs_sim::fixtures::sha256_hex;
use dcs_sim::store::firmware::FileKind as StoredKind;
use dcs_sim::store::ModuleQuery;
use dcs_sim::SimOptions;
use serde_json::json;

mod common;

const MIB: usize = 1024 * 1024;

/// A file of pseudo-random bytes (not compressible, not repeating).
fn write_random_file(path: &Path, size: usize) -> Vec<u8> {
    dcs_sim::fixtures::write_random_file(path, size).unwrap()
}

/// What coreutils' `sha256sum` says of the file.
fn sha256sum(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().expect("sha256sum runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

/// A transfer that counts the bytes of a checksum pass (there is none in a one-read upload).
fn counting() -> (Transfer, Arc<AtomicU64>) {
    let hashed = Arc::new(AtomicU64::new(0));
    let seen = hashed.clone();
    (Transfer::default().with_hashing_progress(move |done, _| seen.store(done, Ordering::Relaxed)), hashed)
}

#[tokio::test]
async fn a_one_read_upload_lands_on_the_simulator_with_its_checksum_checked() {
    let (sim, running) =
        common::start(SimOptions { devices_per_client: 10, speed: 5000.0, ..Default::default() }).await;
    let key = sim.demo_key();
    let c = common::client(&running, &key.key_id, &key.secret);
    let owner = key.client_id;
    let module = sim.store().list_modules(&ModuleQuery { owner, limit: 1, ..Default::default() }).unwrap().remove(0);
    let dir = tempfile::tempdir().unwrap();
    for (i, size) in [1, 256 * 1024 + 1, 3 * MIB + 7].into_iter().enumerate() {
        let package = c
            .firmware()
            .create_package(&NewPackage::new(module.device_specification_id, module.id, format!("98.{i}.0")))
            .await
            .unwrap();
        let path = dir.path().join(format!("fw-98.{i}.0.bin"));
        let bytes = write_random_file(&path, size);
        assert!(!c.firmware().hashes_before_sending(&UploadOptions::default()));
        let (transfer, hashed) = counting();
        c.firmware().upload_firmware_file(package.id, &path, &UploadOptions::default(), &transfer).await.unwrap();
        assert_eq!(hashed.load(Ordering::Relaxed), 0, "no checksum pass before sending");
        let stored = sim.store().file(package.id, StoredKind::Firmware).unwrap().expect("stored");
        assert_eq!((stored.sha256.as_str(), stored.size), (sha256sum(&path).as_str(), size as u64));
        let back = dir.path().join("back.bin");
        c.firmware().download_firmware_file(package.id, &back, &Transfer::default()).await.unwrap();
        assert_eq!(std::fs::read(&back).unwrap(), bytes);
    }
}

#[tokio::test]
async fn hashes_match_sha256sum_at_odd_sizes() {
    let dir = tempfile::tempdir().unwrap();
    for size in [1, 63, 64, 65, 256 * 1024 - 1, 256 * 1024 + 1, MIB - 1, MIB, MIB + 1, 2 * MIB + 4097] {
        let path = dir.path().join(format!("f{size}.bin"));
        let bytes = write_random_file(&path, size);
        let (sha, n) = sha256_file(&path, &Transfer::default()).await.unwrap();
        assert_eq!((sha.as_str(), n), (sha256sum(&path).as_str(), size as u64), "{size} bytes");
        assert_eq!(sha, sha256_hex(&bytes));
    }
}

/// What the hand-made service saw of one upload: the parts in their order, with the SHA-256
/// of the file's bytes and the checksum's text.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    File(String),
    Checksum(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Rule {
    /// Takes the checksum before or after the file.
    AnyOrder,
    /// Refuses (400 naming `checksum`) a checksum that comes after the file.
    ChecksumFirst,
    /// Refuses every checksum, wherever it comes (as if it never matched).
    NeverMatches,
    /// Stores the file and answers with this status and body (no JSON): 201 or 204 with nothing,
    /// 200 with a word.
    Stored(u16, &'static str),
}

struct Service {
    rule: Rule,
    uploads: Mutex<Vec<Vec<Seen>>>,
}

fn refuse(field: &str, reason: &str) -> Response {
    let problem = json!({
        "type": "about:blank", "title": "Bad Request", "status": 400,
        "detail": format!("{field} {reason}"),
        "invalidParams": [{"name": field, "reason": reason}]
    });
    (StatusCode::BAD_REQUEST, [("content-type", "application/problem+json")], problem.to_string()).into_response()
}

async fn upload(State(service): State<Arc<Service>>, mut multipart: Multipart) -> Response {
    let mut seen = Vec::new();
    // A body that breaks off is no upload: not recorded.
    let broken = || refuse("body", "broke off");
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(_) => return broken(),
        };
        match field.name() {
            Some("file") => match field.bytes().await {
                Ok(bytes) => seen.push(Seen::File(sha256_hex(&bytes))),
                Err(_) => return broken(),
            },
            Some("checksum") => match field.text().await {
                Ok(text) => seen.push(Seen::Checksum(text)),
                Err(_) => return broken(),
            },
            _ => {}
        }
    }
    service.uploads.lock().unwrap().push(seen.clone());
    let (file, checksum) = match seen.as_slice() {
        [Seen::Checksum(c), Seen::File(f)] => (f, c),
        [Seen::File(f), Seen::Checksum(c)] if service.rule != Rule::ChecksumFirst => (f, c),
        [Seen::File(_), Seen::Checksum(_)] => return refuse("checksum", "must come before the file"),
        _ => return refuse("file", "and checksum are required"),
    };
    if service.rule == Rule::NeverMatches || file != checksum {
        return refuse("checksum", "does not match the file");
    }
    if let Rule::Stored(status, body) = service.rule {
        let status = axum::http::StatusCode::from_u16(status).unwrap();
        return (status, [(axum::http::header::CONTENT_TYPE, "text/plain")], body).into_response();
    }
    Json(json!({"name": "fw.bin", "contentType": "application/octet-stream", "fileType": "FIRMWARE"})).into_response()
}

const PACKAGE: uuid::Uuid = uuid::Uuid::from_u128(0x5eed);

async fn serve(rule: Rule) -> (String, Arc<Service>) {
    let service = Arc::new(Service { rule, uploads: Mutex::default() });
    let app = Router::new()
        .route(
            "/api/v3/idp/oidc/token",
            post(|| async { Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600})) }),
        )
        .route(
            "/firmware/packages/{id}",
            get(|| async {
                Json(json!({"id": PACKAGE, "moduleId": PACKAGE, "deviceSpecificationId": PACKAGE, "firmwareVersion": "1.0.0"}))
            }),
        )
        .route("/firmware/packages/{id}/firmware-file", post(upload))
        .layer(DefaultBodyLimit::disable())
        .with_state(service.clone());
    (common::serve(app).await, service)
}

fn uploads(service: &Service) -> Vec<Vec<Seen>> {
    std::mem::take(&mut *service.uploads.lock().unwrap())
}

#[tokio::test]
async fn the_checksum_goes_after_the_file_in_one_read_and_first_when_known() {
    let (base, service) = serve(Rule::AnyOrder).await;
    let c: Client = common::client_at(&base, "key", "secret");
    let dir = tempfile::tempdir().unwrap();
    // An empty file too: the CLI uploads one (with a warning), the service not saying it refuses it.
    for size in [0, 1, MIB + 1, 2 * MIB + 4097] {
        let path = dir.path().join("fw.bin");
        write_random_file(&path, size);
        let sum = sha256sum(&path);
        let (transfer, hashed) = counting();
        c.firmware().upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &transfer).await.unwrap();
        assert_eq!(hashed.load(Ordering::Relaxed), 0, "one read");
        assert_eq!(uploads(&service), [vec![Seen::File(sum.clone()), Seen::Checksum(sum.clone())]], "{size} bytes");

        // Known (shown to the user): sent first.
        let modified = std::fs::metadata(&path).unwrap().modified().ok();
        let known = KnownChecksum { sha256: sum.to_uppercase(), size: size as u64, modified };
        let options = UploadOptions { checksum: Some(known), ..Default::default() };
        c.firmware().upload_firmware_file(PACKAGE, &path, &options, &Transfer::default()).await.unwrap();
        assert_eq!(uploads(&service), [vec![Seen::Checksum(sum.clone()), Seen::File(sum)]]);
    }
}

#[tokio::test]
async fn a_service_that_refuses_the_checksum_after_the_file_gets_it_first_from_then_on() {
    let (base, service) = serve(Rule::ChecksumFirst).await;
    let c: Client = common::client_at(&base, "key", "secret");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fw.bin");
    write_random_file(&path, MIB + 1);
    let sum = sha256sum(&path);

    // Refused after the file, sent again at once with the checksum first (no hash pass: the
    // checksum of the bytes just sent).
    let (transfer, hashed) = counting();
    c.firmware().upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &transfer).await.unwrap();
    assert_eq!(hashed.load(Ordering::Relaxed), 0);
    assert_eq!(
        uploads(&service),
        [
            vec![Seen::File(sum.clone()), Seen::Checksum(sum.clone())],
            vec![Seen::Checksum(sum.clone()), Seen::File(sum.clone())]
        ]
    );

    // Learnt by the client and its clones: a hash pass, then one request, checksum first.
    let clone = c.clone();
    assert!(clone.firmware().hashes_before_sending(&UploadOptions::default()));
    let (transfer, hashed) = counting();
    clone.firmware().upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &transfer).await.unwrap();
    assert_eq!(hashed.load(Ordering::Relaxed), (MIB + 1) as u64, "hashed first");
    assert_eq!(uploads(&service), [vec![Seen::Checksum(sum.clone()), Seen::File(sum.clone())]]);

    // A new client has learnt nothing.
    let fresh: Client = common::client_at(&base, "key", "secret");
    assert!(!fresh.firmware().hashes_before_sending(&UploadOptions::default()));
    fresh
        .firmware()
        .upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &Transfer::default())
        .await
        .unwrap();
    assert_eq!(uploads(&service).len(), 2);
}

#[tokio::test]
async fn a_refusal_of_the_checksum_itself_is_reported_after_one_more_try_and_not_learnt() {
    let (base, service) = serve(Rule::NeverMatches).await;
    let c: Client = common::client_at(&base, "key", "secret");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fw.bin");
    write_random_file(&path, 300_000);
    let e = c
        .firmware()
        .upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &Transfer::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadRequest, "{e}");
    assert!(e.refuses_field("checksum") && e.to_string().contains("does not match"), "{e}");
    let seen = uploads(&service);
    assert_eq!(seen.len(), 2, "once after the file, once first: {seen:?}");
    assert!(matches!(seen[1][0], Seen::Checksum(_)));
    assert!(!c.firmware().hashes_before_sending(&UploadOptions::default()), "not learnt");
}

#[tokio::test]
async fn a_file_changed_while_it_is_sent_is_not_stored_with_the_checksum_of_a_mix() {
    let (base, service) = serve(Rule::AnyOrder).await;
    let c: Client = common::client_at(&base, "key", "secret");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fw.bin");
    write_random_file(&path, 8 * MIB);
    // Touched as soon as the first chunk is on its way: the reader, a few chunks ahead, has
    // not reached the end, and finds the modification time changed when it does.
    let touched = path.clone();
    let transfer = Transfer::default().with_progress(move |done, _| {
        if done > 0 && done < 512 * 1024 {
            let f = std::fs::File::options().write(true).open(&touched).unwrap();
            f.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
        }
    });
    let e = c.firmware().upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &transfer).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidInput, "{e}");
    assert!(e.to_string().contains("changed while it was read"), "{e}");
    // The body broke off before its end: the service got no complete upload to store.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(uploads(&service).is_empty());
}

/// A service that stores the file and answers 201 or 204 with no body, or 200 with a word: the
/// upload succeeded (its attributes are what was sent), and it is never sent again (a second
/// would be refused: a firmware file goes up once).
#[tokio::test]
async fn an_upload_answered_without_json_is_stored_and_never_sent_again() {
    for (status, body) in [(201, ""), (204, ""), (200, "stored")] {
        let (base, service) = serve(Rule::Stored(status, body)).await;
        let c: Client = common::client_at(&base, "key", "secret");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fw-2.0.0.bin");
        write_random_file(&path, 70_000);
        let stored = c
            .firmware()
            .upload_firmware_file(PACKAGE, &path, &UploadOptions::default(), &Transfer::default())
            .await
            .unwrap_or_else(|e| panic!("{status} {body:?}: {e}"));
        assert_eq!(stored.name, "fw-2.0.0.bin", "{status}");
        assert_eq!(stored.firmware_package_id, Some(PACKAGE), "{status}");
        assert_eq!(uploads(&service).len(), 1, "{status}: sent once");
    }
}
