//! Connecting profiles to a real simulator over HTTP: the customer choice decides where
//! requests land, the deprecated mode makes its context switch, and a connection test reports
//! the token's contents or the identity platform's refusal.

use dcs_api::firmware::{ModuleFilter, NewPackage};
use dcs_api::{ErrorCode, Secret};
use dcs_console::session::{self, Acting, SessionError};
use dcs_console::{Customer, Profile};
use dcs_sim::{RunningSim, SimOptions, Simulator};
use futures::TryStreamExt;

mod common;

struct Env {
    sim: Simulator,
    running: RunningSim,
}

async fn env() -> Env {
    let (sim, running) = common::spawn(SimOptions { devices_per_client: 5, ..Default::default() }).await;
    Env { sim, running }
}

impl Env {
    fn profile(&self, deprecated: bool) -> Profile {
        let key = self.sim.demo_key();
        let customers = self
            .sim
            .store()
            .clients()
            .unwrap()
            .into_iter()
            .filter(|c| c.reseller_id == Some(key.client_id))
            .map(|c| Customer { id: c.id, label: c.name })
            .collect();
        Profile {
            name: "local".into(),
            base_url: Some(self.running.base_url()),
            auth_url: None,
            client_id: key.key_id,
            audience: dcs_api::model::SERVICE_AUDIENCE.into(),
            customers,
            deprecated_sub_customer_mode: deprecated,
            set_target: None,
        }
    }

    fn secret(&self) -> Secret {
        Secret::new(self.sim.demo_key().secret)
    }

    async fn client(&self, profile: &Profile, acting: &Acting) -> dcs_api::Client {
        session::connect(profile, &self.running.base_url(), self.secret(), acting).await.unwrap()
    }
}

async fn module_ids(client: &dcs_api::Client) -> Vec<uuid::Uuid> {
    let mut ids: Vec<_> =
        client.firmware().modules(&ModuleFilter::default()).unwrap().map_ok(|m| m.id).try_collect().await.unwrap();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_write_as_a_customer_lands_at_that_customer_and_nowhere_else() {
    for deprecated in [false, true] {
        let env = env().await;
        let profile = env.profile(deprecated);
        let [north, contoso, ..] = &profile.customers[..] else { panic!("the demo reseller has customers") };
        let own = env.client(&profile, &Acting::Yourself).await;
        let as_north = env.client(&profile, &Acting::Customer(north.clone())).await;
        let as_contoso = env.client(&profile, &Acting::Customer(contoso.clone())).await;

        let (own_modules, north_modules) = (module_ids(&own).await, module_ids(&as_north).await);
        assert_ne!(own_modules, north_modules, "the lists change with the customer (deprecated mode: {deprecated})");

        let module = as_north.firmware().module(north_modules[0]).await.unwrap();
        let created = as_north
            .firmware()
            .create_package(&NewPackage::new(module.device_specification_id, module.id, "9.9.9-north"))
            .await
            .unwrap();
        assert_eq!(as_north.firmware().package(created.id, &[]).await.unwrap().firmware_version, "9.9.9-north");
        for other in [&own, &as_contoso] {
            let e = other.firmware().package(created.id, &[]).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotFound, "the package leaked to another environment");
        }
    }
}

#[tokio::test]
async fn a_customer_the_key_is_not_reseller_of_is_refused_in_words() {
    let env = env().await;
    let profile = env.profile(false);
    let stranger = Customer { id: uuid::Uuid::from_u128(42), label: "Stranger".into() };
    let client = env.client(&profile, &Acting::Customer(stranger)).await;
    let e = client.firmware().modules_page(&ModuleFilter::default()).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    assert!(e.to_string().contains("not authorized as reseller"), "{e}");

    let deprecated = env.profile(true);
    let stranger = Customer { id: uuid::Uuid::from_u128(42), label: String::new() };
    let refused =
        session::connect(&deprecated, &env.running.base_url(), env.secret(), &Acting::Customer(stranger)).await;
    assert!(matches!(refused, Err(SessionError::Api(_)) | Err(SessionError::SwitchRefused(_))), "{:?}", refused.err());
}

#[tokio::test]
async fn testing_a_connection_reports_the_token_or_the_platforms_refusal() {
    let env = env().await;
    let profile = env.profile(false);
    let base = env.running.base_url();
    let ok = session::test_connection(&profile, &base, env.secret()).await.unwrap();
    assert_eq!((ok.token_type.as_str(), ok.expires_in), ("Bearer", 3600));
    assert!(ok.scopes.unwrap().contains(&"firmware.read".to_owned()));

    let e = session::test_connection(&profile, &base, Secret::new("wrong")).await.unwrap_err();
    assert!(matches!(&e, SessionError::Api(a) if a.code() == ErrorCode::WrongCredentials), "{e}");
    assert!(e.to_string().contains("Feature user does not exist anymore"), "{e}");
}
