//! The check run's default name: the cluster and namespace a run acted on, without the
//! account or project number a cloud's context name carries. The log masks such values
//! (`::add-mask::`), but a check run's name is shown unmasked wherever the commit is.

/// `deploy (prod/shop)`: `word` is what the run does, `context` the kubeconfig context.
pub fn default_check_name(word: &str, context: Option<&str>, namespace: &str) -> String {
    let cluster = context.map_or("cluster", cluster_name);
    format!("{word} ({cluster}/{namespace})")
}

/// The cluster's own name in the context names the clouds' CLIs write, the context
/// unchanged otherwise:
/// - EKS (`aws eks update-kubeconfig`): `arn:aws:eks:REGION:ACCOUNT:cluster/NAME`, in any
///   partition (`aws-cn`, `aws-us-gov`);
/// - GKE (`gcloud container clusters get-credentials`): `gke_PROJECT_LOCATION_NAME`.
fn cluster_name(context: &str) -> &str {
    let eks = context
        .strip_prefix("arn:")
        .and_then(|rest| rest.split(':').nth(4))
        .filter(|_| context.split(':').nth(2) == Some("eks"))
        .and_then(|resource| resource.strip_prefix("cluster/"));
    if let Some(name) = eks.filter(|n| !n.is_empty()) {
        return name;
    }
    // Project ids, zones and cluster names have no underscore, so four parts is GKE's form.
    let gke: Vec<&str> = context.split('_').collect();
    if let ["gke", project, location, name] = gke[..]
        && ![project, location, name].contains(&"")
    {
        return name;
    }
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clouds_account_or_project_stays_out_of_the_name() {
        let cases = [
            (
                Some("arn:aws:eks:eu-west-1:123456789012:cluster/prod"),
                "deploy (prod/shop)",
            ),
            (
                Some("arn:aws-us-gov:eks:us-gov-west-1:123456789012:cluster/gov"),
                "deploy (gov/shop)",
            ),
            (
                Some("gke_acme-prod-4711_europe-west1-b_main"),
                "deploy (main/shop)",
            ),
            (
                Some("kind-deploy-action"),
                "deploy (kind-deploy-action/shop)",
            ),
            // Not a cloud's form: kept whole rather than guessed at.
            (
                Some("arn:aws:iam::123456789012:role/deployer"),
                "deploy (arn:aws:iam::123456789012:role/deployer/shop)",
            ),
            (Some("gke_half_named"), "deploy (gke_half_named/shop)"),
            (
                Some("arn:aws:eks:eu-west-1:1:cluster/"),
                "deploy (arn:aws:eks:eu-west-1:1:cluster//shop)",
            ),
            (None, "deploy (cluster/shop)"),
        ];
        for (context, name) in cases {
            assert_eq!(
                default_check_name("deploy", context, "shop"),
                name,
                "{context:?}"
            );
        }
    }
}
