//! Connector bindings (reference sections 2.8, 4.4): `client.bindings().lora()` (and `http()`,
//! `mqtt()`) list, get, create, update (full PUT) and delete. Field names not shown by the
//! reference follow the simulator; the fields are checked with the model's validators.

use std::marker::PhantomData;

use futures::Stream;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use url::Url;
use uuid::Uuid;

use crate::calls::{self, TimeFilter};
use crate::error::{Error, FieldError, Result};
use crate::model::validate;
use crate::model::{
    BindingKind, HttpBinding, HttpBindingRequest, HttpBindingType, LoraBinding, LoraBindingRequest, MqttBinding,
    MqttBindingRequest, Page,
};
use crate::paging;
use crate::Client;

/// What differs between the binding kinds.
pub trait BindingSpec {
    const KIND: BindingKind;
    type Binding: DeserializeOwned + 'static;
    type Request: Serialize;
    /// The field that holds the kind's secret (`appKey`, `sharedSecret`, `password`).
    const SECRET_FIELD: &'static str;
    /// Every rule a request body breaks, as `(field, rule)` in body order: what a form shows
    /// next to its fields as the user types.
    fn check(req: &Self::Request) -> Vec<FieldError>;
    /// Checks a request body before it is sent: the first rule it breaks, if any.
    fn validate(req: &Self::Request) -> Result<()> {
        match Self::check(req).into_iter().next() {
            Some(broken) => Err(broken.into()),
            None => Ok(()),
        }
    }
    /// Fields the simulator sorts the kind by: suggestions, not checked.
    const SORT_FIELDS: &'static [&'static str];
    /// The members of a binding as read that this version does not know.
    fn unknown_members(b: &Self::Binding) -> &Map<String, Value>;
    /// Where a request keeps such members, to send them back.
    fn unknown_members_mut(req: &mut Self::Request) -> &mut Map<String, Value>;
    /// `req` made a full replacement of `read`: the members of `read` this version does not
    /// know go back with it (those the request writes itself win), so a `PUT` drops nothing a
    /// newer service added.
    fn carry_unknown_members(read: &Self::Binding, req: &mut Self::Request) {
        let known: Vec<String> = match serde_json::to_value(&*req) {
            Ok(Value::Object(m)) => m.into_iter().map(|(k, _)| k).collect(),
            _ => Vec::new(),
        };
        let extra = Self::unknown_members_mut(req);
        for (k, v) in Self::unknown_members(read) {
            if !known.contains(k) {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
}

pub struct Lora;
pub struct Http;
pub struct Mqtt;

/// The rules broken, from each field's check in order.
fn broken(checks: Vec<(&'static str, std::result::Result<(), String>)>) -> Vec<FieldError> {
    checks.into_iter().filter_map(|(field, r)| r.err().map(|rule| FieldError::new(field, rule))).collect()
}

fn device(s: &str) -> std::result::Result<(), String> {
    crate::model::DeviceId::parse(s).map(|_| ()).map_err(|e| e.to_string())
}

fn known_type(t: &HttpBindingType) -> std::result::Result<(), String> {
    if t.is_known() {
        Ok(())
    } else {
        Err("must be http-streamline or http-senml".into())
    }
}

impl BindingSpec for Lora {
    const KIND: BindingKind = BindingKind::Lora;
    type Binding = LoraBinding;
    type Request = LoraBindingRequest;
    const SORT_FIELDS: &'static [&'static str] =
        &["createdAt", "modifiedAt", "deviceId", "id", "applicationServerId", "status"];
    const SECRET_FIELD: &'static str = "appKey";
    fn unknown_members(b: &LoraBinding) -> &Map<String, Value> {
        &b.extra
    }
    fn unknown_members_mut(r: &mut LoraBindingRequest) -> &mut Map<String, Value> {
        &mut r.extra
    }
    fn check(r: &LoraBindingRequest) -> Vec<FieldError> {
        broken(vec![
            ("deviceId", device(&r.device_id)),
            ("applicationServerId", validate::hex_exact(&r.application_server_id, 16)),
            ("appKey", validate::hex_exact(&r.app_key, 32)),
        ])
    }
}

impl BindingSpec for Http {
    const KIND: BindingKind = BindingKind::Http;
    type Binding = HttpBinding;
    type Request = HttpBindingRequest;
    const SORT_FIELDS: &'static [&'static str] = &["createdAt", "modifiedAt", "deviceId", "id", "type"];
    const SECRET_FIELD: &'static str = "sharedSecret";
    fn unknown_members(b: &HttpBinding) -> &Map<String, Value> {
        &b.extra
    }
    fn unknown_members_mut(r: &mut HttpBindingRequest) -> &mut Map<String, Value> {
        &mut r.extra
    }
    /// The `sharedSecret` rule is not shown (the simulator's is A-62): the service judges it.
    fn check(r: &HttpBindingRequest) -> Vec<FieldError> {
        broken(vec![("deviceId", device(&r.device_id)), ("type", known_type(&r.binding_type))])
    }
}

impl BindingSpec for Mqtt {
    const KIND: BindingKind = BindingKind::Mqtt;
    type Binding = MqttBinding;
    type Request = MqttBindingRequest;
    const SORT_FIELDS: &'static [&'static str] = &["createdAt", "modifiedAt", "deviceId", "id", "username"];
    const SECRET_FIELD: &'static str = "password";
    fn unknown_members(b: &MqttBinding) -> &Map<String, Value> {
        &b.extra
    }
    fn unknown_members_mut(r: &mut MqttBindingRequest) -> &mut Map<String, Value> {
        &mut r.extra
    }
    fn check(r: &MqttBindingRequest) -> Vec<FieldError> {
        broken(vec![("deviceId", device(&r.device_id)), ("password", validate::mqtt_password(&r.password))])
    }
}

/// Filters and window of `GET /K/bindings`.
#[derive(Debug, Clone, Default)]
pub struct BindingFilter {
    /// Only bindings of devices owned by this client.
    pub client_id: Option<Uuid>,
    /// Any of the seven device-id forms.
    pub device_id: Option<String>,
    pub time: TimeFilter,
    /// HTTP only.
    pub binding_type: Option<HttpBindingType>,
    /// MQTT only: exact equality.
    pub username: Option<String>,
    pub sort: Option<String>,
    pub limit: Option<u32>,
}

impl BindingFilter {
    fn to_url<S: BindingSpec>(&self, client: &Client) -> Result<Url> {
        let kind = S::KIND;
        let mut url = client.url(kind.path())?;
        {
            let mut q = url.query_pairs_mut();
            calls::append_window(&mut q, self.limit, self.sort.as_deref())?;
            if let Some(c) = self.client_id {
                q.append_pair("clientId", &c.to_string());
            }
            if let Some(d) = &self.device_id {
                q.append_pair("deviceId", &calls::device_id("deviceId", d)?);
            }
            if let Some(t) = &self.binding_type {
                if kind != BindingKind::Http {
                    return Err(Error::invalid("type", "filters HTTP bindings only"));
                }
                known_type(t).map_err(|rule| Error::invalid("type", rule))?;
                q.append_pair("type", t.as_str());
            }
            if let Some(u) = &self.username {
                if kind != BindingKind::Mqtt {
                    return Err(Error::invalid("username", "filters MQTT bindings only"));
                }
                q.append_pair("username", u);
            }
            self.time.append(&mut q)?;
        }
        Ok(calls::tidy(url))
    }
}

/// The binding area of the API.
pub struct Bindings<'a> {
    client: &'a Client,
}

impl Client {
    pub fn bindings(&self) -> Bindings<'_> {
        Bindings { client: self }
    }
}

impl<'a> Bindings<'a> {
    pub fn lora(&self) -> KindBindings<'a, Lora> {
        KindBindings { client: self.client, kind: PhantomData }
    }
    pub fn http(&self) -> KindBindings<'a, Http> {
        KindBindings { client: self.client, kind: PhantomData }
    }
    pub fn mqtt(&self) -> KindBindings<'a, Mqtt> {
        KindBindings { client: self.client, kind: PhantomData }
    }
}

/// `/K/bindings` of one kind.
pub struct KindBindings<'a, S> {
    client: &'a Client,
    kind: PhantomData<S>,
}

impl<S: BindingSpec> KindBindings<'_, S> {
    fn item_url(&self, id: Uuid) -> Result<Url> {
        self.client.url(&format!("{}/{id}", S::KIND.path()))
    }

    pub async fn page(&self, filter: &BindingFilter) -> Result<(Page<S::Binding>, Option<Url>)> {
        paging::fetch_page(self.client, filter.to_url::<S>(self.client)?).await
    }

    pub async fn page_at(&self, link: &Url) -> Result<(Page<S::Binding>, Option<Url>)> {
        paging::fetch_page(self.client, link.clone()).await
    }

    /// Every binding, page after page.
    pub fn list(&self, filter: &BindingFilter) -> Result<impl Stream<Item = Result<S::Binding>>> {
        Ok(paging::items(self.client.clone(), filter.to_url::<S>(self.client)?))
    }

    pub async fn get(&self, id: Uuid) -> Result<S::Binding> {
        self.client.get_json(self.item_url(id)?).await
    }

    pub async fn create(&self, req: &S::Request) -> Result<S::Binding> {
        S::validate(req)?;
        self.client.post_json_as(self.client.url(S::KIND.path())?, req).await
    }

    /// Full replacement. To keep what this version does not know, build `req` from the binding
    /// as read ([`BindingSpec::carry_unknown_members`]).
    pub async fn update(&self, id: Uuid, req: &S::Request) -> Result<S::Binding> {
        S::validate(req)?;
        self.client.put_json_as(self.item_url(id)?, req).await
    }

    pub async fn delete(&self, id: Uuid) -> Result<()> {
        self.client.delete_call(self.item_url(id)?).await
    }
}

impl KindBindings<'_, Lora> {
    /// A LoRa binding; with `sync` the latest state is first fetched from the network server.
    pub async fn get_synced(&self, id: Uuid, sync: bool) -> Result<LoraBinding> {
        let mut url = self.item_url(id)?;
        if sync {
            url.query_pairs_mut().append_pair("sync", "true");
        }
        self.client.get_json(url).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_every_broken_field_and_validate_the_first() {
        let bad = LoraBindingRequest {
            device_id: "imei:12".into(),
            application_server_id: "0011".into(),
            app_key: "zz".into(),
            extra: Map::new(),
        };
        let fields: Vec<String> = Lora::check(&bad).into_iter().map(|f| f.field).collect();
        assert_eq!(fields, ["deviceId", "applicationServerId", "appKey"]);
        match Lora::validate(&bad) {
            Err(Error::InvalidInput { field, .. }) => assert_eq!(field, "deviceId"),
            other => panic!("{other:?}"),
        }
        let good = LoraBindingRequest {
            device_id: "deveui:70b3d57ed0000001".into(),
            application_server_id: "0011223344556677".into(),
            app_key: "00112233445566778899AABBCCDDEEFF".into(),
            extra: Map::new(),
        };
        assert!(Lora::check(&good).is_empty());

        let http = HttpBindingRequest {
            device_id: "imei:350000000000001".into(),
            binding_type: HttpBindingType::from("http-xml"),
            shared_secret: "short".into(),
            extra: Map::new(),
        };
        let fields: Vec<String> = Http::check(&http).into_iter().map(|f| f.field).collect();
        assert_eq!(fields, ["type"], "the sharedSecret rule is the service's (not shown)");

        let weak = MqttBindingRequest {
            device_id: "imei:350000000000001".into(),
            password: "password".into(),
            extra: Map::new(),
        };
        let rules = Mqtt::check(&weak);
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].field, Mqtt::SECRET_FIELD);
        assert!(rules[0].rule.contains("at least 24 characters"), "{}", rules[0].rule);
    }

    #[test]
    fn a_replacement_carries_the_unknown_members_of_the_binding_read() {
        let read: HttpBinding = serde_json::from_value(serde_json::json!({
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "deviceId": "d", "type": "http-senml",
            "sharedSecret": "old", "tlsProfile": "strict", "sharedsecret": "odd"
        }))
        .unwrap();
        let mut req = HttpBindingRequest {
            device_id: "imei:350000000000001".into(),
            binding_type: HttpBindingType::Streamline,
            shared_secret: "new".into(),
            extra: Map::new(),
        };
        Http::carry_unknown_members(&read, &mut req);
        let body = serde_json::to_value(&req).unwrap();
        assert_eq!(body["tlsProfile"], "strict");
        assert_eq!(body["sharedSecret"], "new", "the request's own fields win");
        assert_eq!(body["type"], "http-streamline");
        assert_eq!(body.as_object().unwrap().len(), 5, "{body}");
    }
}
