//! Services: EndpointSlices, legacy Endpoints and load balancers.

mod backends;
mod endpoints;
mod endpointslice;
mod loadbalancer;
#[cfg(test)]
mod tests;

pub use endpoints::EndpointsController;
pub use endpointslice::EndpointSliceController;
pub use loadbalancer::LoadBalancerController;

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(EndpointSliceController::default()),
        Box::new(EndpointsController::default()),
        Box::new(LoadBalancerController::default()),
    ]
}
