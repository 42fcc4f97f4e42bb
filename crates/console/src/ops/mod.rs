//! The use cases every front end offers, each written once (after GitButler's `but-api`): a
//! function that takes what it acts in ([`FleetCtx`]) and typed parameters and answers a typed
//! result. The desktop app's commands, `dcs`'s subcommands and the runner (`dcs serve`) only
//! turn their arguments into those parameters and the results into JSON or text; the guards
//! (still the customer that was confirmed, the rollout is this scope's, the profile has a
//! set-target operation) are checked here, once.
//!
//! - [`rollouts`]: preview, start, pause, resume, continue, abort, the step, the reset of stuck
//!   devices, rehearsal and report.

pub mod rollouts;

use dcs_api::Client;
use uuid::Uuid;

use crate::fleet::service::FleetService;
use crate::fleet::Scope;
use crate::set_target::SetTarget;
use crate::Error;

/// What a fleet use case acts in: the session's client, its profile's name and set-target
/// operation, the customer acted for, this process's fleet service (its database, its one
/// piece of work at a time, and the driver it is) and the scope.
#[derive(Clone, Copy)]
pub struct FleetCtx<'a> {
    pub client: &'a Client,
    pub profile: &'a str,
    pub set_target: Option<&'a SetTarget>,
    /// The customer acted for (`None`: the profile's own environment).
    pub acting: Option<Uuid>,
    pub fleet: &'a FleetService,
    pub scope: Scope,
}

/// What the operator confirmed a change for: the customer the confirmation named. A front end
/// makes one after asking (the app's dialog answers it; `dcs` after its prompt or `--yes`), and
/// a use case that changes something refuses it when the session now acts for someone else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirmed {
    customer: Option<Uuid>,
}

impl Confirmed {
    /// The operator confirmed while acting for `customer` (`None`: the profile's own).
    pub fn for_customer(customer: Option<Uuid>) -> Confirmed {
        Confirmed { customer }
    }
}

impl FleetCtx<'_> {
    /// Refuses a change confirmed for another customer than the one acted for now.
    pub fn check(&self, confirmed: &Confirmed) -> Result<(), Error> {
        if confirmed.customer != self.acting {
            return Err(Error::ContextChanged(format!(
                "the active customer changed to {} after you confirmed; nothing was sent",
                match self.acting {
                    Some(c) => format!("customer {c}"),
                    None => "your own environment".into(),
                }
            )));
        }
        Ok(())
    }

    /// The set-target operation, or why rollouts cannot set targets with this profile (said
    /// for both front ends: where to add it in the app and in `dcs`).
    pub fn operation(&self) -> Result<&SetTarget, Error> {
        self.set_target.ok_or_else(|| {
            let name = self.profile;
            Error::Unavailable(format!(
                "rollouts are unavailable: profile `{name}` has no set-target operation. The service's API documentation \
                 does not describe how a target version is set, so the console does not guess; scans and monitoring work \
                 without it. To enable rollouts, add the operation your service documents to the profile: in the app, \
                 Settings > profile `{name}` > \"Set-target operation\"; in dcs, `dcs profile edit {name} \
                 --set-target-method PUT --set-target-path '/...{{deviceId}}...' --set-target-body '{{...: {{version}}}}'`, \
                 then try it with `dcs profile test-set-target {name} --device UUID --module UUID`"
            ))
        })
    }

    pub fn db(&self) -> &crate::fleet::FleetDb {
        self.fleet.db()
    }
}
