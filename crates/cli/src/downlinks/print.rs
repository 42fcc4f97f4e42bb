//! Downlinks as tables and fields.

use dcs_api::downlinks::{ActuatorDownlink, ConnectionDownlink};
use dcs_api::Raw;

use crate::output::{self, opt, ts};

pub(super) fn actuator_table(all: &[Raw<ActuatorDownlink>]) {
    output::table(
        &["ID", "STATUS", "NETWORK ID", "METHOD", "EXTERNAL REFERENCE", "CREATED"],
        all.iter()
            .map(|d| {
                vec![
                    opt(&d.id),
                    d.status.to_string(),
                    d.network_id.clone(),
                    d.raw["method"]["type"].as_str().unwrap_or("-").to_owned(),
                    opt(&d.external_reference),
                    ts(&d.created_at),
                ]
            })
            .collect(),
    );
}

pub(super) fn actuator_one(d: &Raw<ActuatorDownlink>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(d);
    }
    output::fields(&[
        ("id", opt(&d.id)),
        ("status", d.status.to_string()),
        ("network id", d.network_id.clone()),
        ("external reference", opt(&d.external_reference)),
        ("method", d.method.as_ref().map(|m| m.to_string()).unwrap_or_else(|| "-".into())),
        ("message", d.message_text().unwrap_or_else(|| "-".into())),
        ("retries", format!("{} of {}", opt(&d.retry_count), opt(&d.retry_limit))),
        ("feedback timeout", opt(&d.feedback_timeout)),
        ("dry run", opt(&d.dry_run)),
        ("last failure", d.raw.get("lastFailureReason").map(|v| v.to_string()).unwrap_or_else(|| "-".into())),
        ("created", ts(&d.created_at)),
        ("modified", ts(&d.modified_at)),
    ]);
    Ok(())
}

pub(super) fn connection_table(all: &[Raw<ConnectionDownlink>]) {
    output::table(
        &["ID", "STATUS", "DEVICE", "FEEDBACK TIMEOUT", "CREATED"],
        all.iter()
            .map(|d| vec![opt(&d.id), opt(&d.status), d.device_id.clone(), opt(&d.feedback_timeout), ts(&d.created_at)])
            .collect(),
    );
}

pub(super) fn connection_one(d: &Raw<ConnectionDownlink>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(d);
    }
    let mut pairs = vec![
        ("id", opt(&d.id)),
        ("status", opt(&d.status)),
        ("device", d.device_id.clone()),
        ("feedback timeout", opt(&d.feedback_timeout)),
        ("dry run", opt(&d.dry_run)),
        ("retries", format!("{} of {}", opt(&d.retry_count), opt(&d.retry_limit))),
        ("created", ts(&d.created_at)),
        ("modified", ts(&d.modified_at)),
    ];
    let known = [
        "id",
        "status",
        "deviceId",
        "feedbackTimeout",
        "dryRun",
        "retryCount",
        "retryLimit",
        "createdAt",
        "modifiedAt",
    ];
    let extra: Vec<(String, String)> = d
        .raw
        .as_object()
        .map(|o| {
            o.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.to_string())).collect()
        })
        .unwrap_or_default();
    for (k, v) in &extra {
        pairs.push((k.as_str(), v.clone()));
    }
    output::fields(&pairs);
    Ok(())
}
