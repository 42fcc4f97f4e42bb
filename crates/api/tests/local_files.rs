//! Local files the client reads and writes: only regular files are read (a device never ends,
//! a pipe blocks on open), and a download leaves nothing under or beside the target's name when
//! it does not finish, whatever way it ends.

use std::path::Path;
use std::time::Duration;

use axum::body::Body;
use axum::routing::{get, post};
use axum::{Json, Router};
use dcs_api::files::{sha256_file, Transfer};
use dcs_api::{Client, ErrorCode};
use serde_json::json;

mod common;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn only_regular_files_are_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for path in [Path::new("/dev/zero"), fifo.as_path(), dir.path()] {
        let got = tokio::time::timeout(Duration::from_secs(5), sha256_file(path, &Transfer::default()))
            .await
            .unwrap_or_else(|_| panic!("hashing {} did not end", path.display()));
        let e = got.expect_err("not a regular file");
        assert_eq!(e.code(), ErrorCode::InvalidInput, "{e}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
    // A regular file, empty or not, is.
    let file = dir.path().join("empty.bin");
    std::fs::write(&file, b"").unwrap();
    let (sha, size) = sha256_file(&file, &Transfer::default()).await.unwrap();
    assert_eq!((sha.as_str(), size), ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0));
}

/// A service whose file download sends 1 KiB, then nothing more (the body never ends).
async fn stalling_service() -> Client {
    let app = Router::new()
        .route(
            "/api/v3/idp/oidc/token",
            post(|| async { Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600})) }),
        )
        .route(
            "/firmware/packages/{id}/firmware-file",
            get(|| async {
                let first = futures::stream::once(async { Ok::<_, std::io::Error>(vec![7u8; 1024]) });
                let stall = futures::stream::pending();
                axum::response::Response::builder()
                    .header("content-length", "1000000")
                    .header("content-disposition", "attachment; filename=\"../../evil.bin\"")
                    .body(Body::from_stream(futures::StreamExt::chain(first, stall)))
                    .unwrap()
            }),
        );
    common::client_at(&common::serve(app).await, "key", "secret")
}

#[tokio::test]
async fn a_download_dropped_half_way_leaves_nothing_and_overwrites_no_part_file() {
    let c = stalling_service().await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("fw.bin");
    // The user's own file that happens to have the partial file's name.
    std::fs::write(dir.path().join("fw.bin.part"), b"mine").unwrap();
    let package = uuid::Uuid::new_v4();
    let fw = c.firmware();
    let transfer = Transfer::default();
    let download = fw.download_firmware_file(package, &target, &transfer);
    // The caller gives up (a closed window, a dropped job): the future is dropped mid-body.
    assert!(tokio::time::timeout(Duration::from_millis(700), download).await.is_err());
    assert_eq!(names(dir.path()), vec!["fw.bin.part".to_owned()], "only the user's file is left");
    assert_eq!(std::fs::read(dir.path().join("fw.bin.part")).unwrap(), b"mine");
}

#[tokio::test]
async fn a_file_name_of_only_dots_is_refused_before_anything_is_sent() {
    let c = stalling_service().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fw.bin");
    std::fs::write(&file, b"firmware").unwrap();
    for name in ["..", "."] {
        let options = dcs_api::files::UploadOptions { file_name: Some(name.to_owned()), ..Default::default() };
        // The stalling service has no package route: a request would fail otherwise.
        let e = c
            .firmware()
            .upload_firmware_file(uuid::Uuid::new_v4(), &file, &options, &Transfer::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidInput, "{e}");
        assert!(e.to_string().contains("only dots"), "{e}");
    }
}

/// A service that refuses an upload for its size before reading it (413, then closes): the
/// caller gets the service's refusal, not "could not reach" (which it got about one run in ten).
#[tokio::test]
async fn an_upload_refused_for_its_size_is_the_services_refusal() {
    let package = uuid::Uuid::new_v4();
    let spec = uuid::Uuid::new_v4();
    let app = Router::new()
        .route(
            "/api/v3/idp/oidc/token",
            post(|| async { Json(json!({"access_token": "t", "token_type": "Bearer", "expires_in": 3600})) }),
        )
        .route(
            "/firmware/packages/{id}",
            get(move || async move {
                Json(json!({"id": package, "moduleId": package, "deviceSpecificationId": spec, "firmwareVersion": "1.0.0"}))
            }),
        )
        .route(
            "/firmware/packages/{id}/firmware-file",
            post(|| async {
                (
                    axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                    [("content-type", "application/problem+json"), ("connection", "close")],
                    r#"{"type":"about:blank","title":"Payload Too Large","status":413,"detail":"at most 1 MiB"}"#,
                )
            }),
        )
        .layer(axum::extract::DefaultBodyLimit::max(1024));
    let c = common::client_at(&common::serve(app).await, "key", "secret");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    std::fs::write(&file, vec![1u8; 8 * 1024 * 1024]).unwrap();
    let e =
        c.firmware().upload_firmware_file(package, &file, &Default::default(), &Transfer::default()).await.unwrap_err();
    // The 413 when the client could read it; else (the service closed while the body was still
    // going out) a protocol error saying the service closed mid-upload, never "could not reach".
    match &e {
        dcs_api::Error::Api { status: 413, .. } => {}
        dcs_api::Error::Protocol { reason, .. } => assert!(reason.contains("may refuse files this large"), "{reason}"),
        _ => panic!("{:?}: {e}", e.code()),
    }
}
