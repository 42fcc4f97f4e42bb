//! Plain http is allowed to this computer only because nothing crosses a network; a proxy named
//! by the environment (HTTP_PROXY, ALL_PROXY) would still receive the token request, the client
//! secret in clear. So a loopback service is reached directly, never through a proxy.
//!
//! Its own test binary, one test: the proxy variables are the process's environment.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dcs_sim::SimOptions;

#[tokio::test]
async fn a_loopback_service_is_reached_directly_whatever_proxy_the_environment_names() {
    // A "proxy" that counts who connects to it and answers nothing useful.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            use tokio::io::AsyncWriteExt;
            let _ = socket.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
        }
    });
    // SAFETY: this binary runs this one test, and sets the variables before any thread reads them.
    unsafe {
        for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"] {
            std::env::set_var(var, &proxy);
        }
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
    }
    let (sim, running) = common::start(SimOptions { devices_per_client: 2, ..Default::default() }).await;
    let key = sim.demo_key();
    let client = common::client(&running, &key.key_id, &key.secret);
    client.check_auth().await.expect("the token request goes straight to the loopback service");
    client.firmware().module(uuid::Uuid::new_v4()).await.expect_err("a module that does not exist");
    assert_eq!(connections.load(Ordering::SeqCst), 0, "a request to the loopback service went through the proxy");
}
