//! The smallest Tauri window: WebKitGTK's floor for bench/app_idle.py. It draws the way the app
//! does (WebKit's defaults: the app sets no rendering option of its own).

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .expect("the floor window could not start");
}
