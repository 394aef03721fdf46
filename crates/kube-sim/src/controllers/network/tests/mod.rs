//! Scenario tests of Service endpoints and load balancers.

mod endpoints;
mod loadbalancer;
