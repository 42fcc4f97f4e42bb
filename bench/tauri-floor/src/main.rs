//! The smallest Tauri window: WebKitGTK's floor for bench/app_idle.py. It draws the way the app
//! does (the app's rule for WebKit's compositing, the same source file).

#[path = "../../../src-tauri/src/rendering.rs"]
mod rendering;

fn main() {
    rendering::choose();
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .expect("the floor window could not start");
}
