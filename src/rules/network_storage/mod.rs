//! Services, Ingresses and PersistentVolumeClaims: resources that are ready when something
//! else (pods, a controller, a provisioner) has answered for them.

pub mod endpoints;
pub mod ingress;
pub mod pvc;
pub mod service;
