//! The embedded simulator: started in-process on a free loopback port when no real service is
//! configured, and the client that talks to it as the built-in profile.

use std::net::{Ipv4Addr, SocketAddr};

use dcs_api::{Client, ClientConfig, Secret};
use dcs_sim::{RunningSim, SimOptions, Simulator};

use crate::{Customer, Profile};

/// A running embedded simulator and a client logged in as its demo reseller.
pub struct Embedded {
    pub sim: Simulator,
    pub running: RunningSim,
    pub client: Client,
    pub profile: Profile,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("could not start the simulator: {0}")]
    Start(String),
    #[error(transparent)]
    Client(#[from] dcs_api::Error),
}

/// Starts the simulator on `127.0.0.1:<free port>` inside the current tokio runtime.
pub async fn start(opts: SimOptions) -> Result<Embedded, EmbedError> {
    let sim = Simulator::new(opts).map_err(|e| EmbedError::Start(e.to_string()))?;
    let running = sim
        .spawn(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .map_err(|e| EmbedError::Start(e.to_string()))?;
    let key = sim.demo_key();
    let base = running.base_url();
    let config = ClientConfig::new(&base, &base, &key.key_id, Secret::new(key.secret.clone()))?;
    let client = Client::new(config)?;
    let customers = customers(&sim, key.client_id)?;
    Ok(Embedded { profile: Profile::simulator(&key.key_id, customers), sim, running, client })
}

/// The demo reseller's customers, labelled with their names, for the built-in profile.
fn customers(sim: &Simulator, reseller: uuid::Uuid) -> Result<Vec<Customer>, EmbedError> {
    let clients = sim.store().clients().map_err(|e| EmbedError::Start(e.to_string()))?;
    Ok(clients
        .into_iter()
        .filter(|c| c.reseller_id == Some(reseller))
        .map(|c| Customer { id: c.id, label: c.name })
        .collect())
}
