//! The OS keychain for real: these tests need a Secret Service (the test command runs them
//! inside `dbus-run-session` with an unlocked gnome-keyring). They fail, never skip, without one.

use dcs_api::Secret;
use dcs_console::Keychain;

#[test]
fn the_backend_is_a_platform_store_not_keyrings_mock() {
    Keychain::ensure_platform_store().expect("keyring must use the OS store, not its mock");
    let entry = keyring::Entry::new("dcs-console-test", "backend-probe").unwrap();
    let described = format!("{:?}", entry.get_credential());
    assert!(!described.contains("Mock"), "mock keyring backend in use: {described}");
}

#[test]
fn stores_and_reads_back_the_secret_of_the_built_in_profile() {
    let keychain = Keychain;
    let profile = format!("simulator-test-{}", std::process::id());
    let secret = Secret::new(format!("sim-secret-{}", uuid::Uuid::new_v4()));
    keychain.set_secret(&profile, &secret).expect("store in the keychain");

    // A fresh entry object reads it back: the mock store would have nothing here.
    assert_eq!(keychain.secret(&profile).unwrap().as_ref().map(Secret::expose), Some(secret.expose()));

    // And it is in the Secret Service itself, where another program finds it.
    let out = std::process::Command::new("secret-tool")
        .args(["lookup", "service", dcs_console::keychain::SERVICE, "username", &format!("profile:{profile}")])
        .output()
        .expect("secret-tool (Debian package libsecret-tools) runs");
    assert!(out.status.success(), "secret-tool could not find the entry");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), secret.expose());

    keychain.delete_secret(&profile).unwrap();
    assert!(keychain.secret(&profile).unwrap().is_none());
    keychain.delete_secret(&profile).expect("deleting twice is not an error");
}
