//! Members the model does not know are kept as sent and go back unchanged, numbers included
//! (found by fuzz/service_json: a long number came back with its last digit changed).

use dcs_model::{FirmwareModule, Page};

#[test]
fn unknown_numeric_members_go_back_exactly() {
    let sent = r#"{"items":[{"id":"0b6e4c1a-5d0f-4a8e-9a51-2f1c7d3e9b10","name":"m","firmwareVersionAttributeName":"a","deviceSpecificationId":"8f2d7c6e-1b4a-4e3d-9c2b-7a6f5e4d3c21","vendorScore":[17777777777777777777777777777777777777777777777,0.1,2.2250738585072014e-308]}]}"#;
    let page: Page<FirmwareModule> = serde_json::from_str(sent).unwrap();
    let again: Page<FirmwareModule> = serde_json::from_str(&serde_json::to_string(&page).unwrap()).unwrap();
    assert_eq!(page, again);
}
