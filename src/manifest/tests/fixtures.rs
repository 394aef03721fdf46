//! Realistic manifests shared by the tests; line numbers in the tests refer to these.

/// A hand-written file: Deployment (init container + two containers) and Service.
pub const WEB: &str = r#"# Web frontend
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app.kubernetes.io/name: web
  annotations:
    deploy-action.io/timeout: 5m
    deploy-action.io/required-rollout: 90%
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      initContainers:
      - name: migrate
        image: registry.example.com/shop/web:2.4.1
        command: ["bin/migrate"]
      containers:
      - name: web
        image: registry.example.com/shop/web:2.4.1
        ports:
        - containerPort: 8080
          name: http
        resources:
          requests:
            cpu: 250m
            memory: 256Mi
      - name: metrics-sidecar
        image: prom/statsd-exporter:v0.26.0
        args:
        - --statsd.listen-udp=:9125
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app.kubernetes.io/name: web
  ports:
  - name: http
    port: 80
    targetPort: http
"#;

/// `helm template` output: `# Source:` comments and a template that rendered empty.
pub const HELM: &str = r#"---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: shop
  labels:
    helm.sh/chart: shop-1.2.0
---
# Source: shop/templates/hpa.yaml
---
# Source: shop/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
data:
  LOG_LEVEL: "info"
  nginx.conf: |
    server {
      listen 8080;
    }
  FEATURE_FLAGS: "true"
---
# Source: shop/templates/cronjob.yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: shop-cleanup
spec:
  schedule: "*/15 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: cleanup
            image: "registry.example.com/shop/cleanup:1.0.3"
            args: ["--older-than", "24h"]
"#;

/// `kustomize build` output: sorted keys, no comments, hashed ConfigMap name.
pub const KUSTOMIZE: &str = r"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
data:
  DATABASE_HOST: db.shop.svc
kind: ConfigMap
metadata:
  name: web-config-7g8h9k2m4t
  namespace: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
  name: web
  namespace: shop
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - envFrom:
        - configMapRef:
            name: web-config-7g8h9k2m4t
        image: registry.example.com/shop/web:2.4.1
        name: web
";

/// A Pod as `kubectl get -o json` prints it (trimmed).
pub const POD_JSON: &str = r#"{
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "debug",
        "namespace": "shop"
    },
    "spec": {
        "containers": [
            {
                "name": "shell",
                "image": "busybox:1.36",
                "command": ["sleep", "3600"]
            }
        ]
    }
}
"#;

/// `kubectl get cm,svc -o yaml` output.
pub const LIST: &str = r#"apiVersion: v1
items:
- apiVersion: v1
  data:
    ENV: production
  kind: ConfigMap
  metadata:
    name: settings
    namespace: shop
- apiVersion: v1
  kind: Service
  metadata:
    name: api
    namespace: shop
  spec:
    ports:
    - port: 443
      protocol: TCP
kind: List
metadata:
  resourceVersion: ""
"#;

/// A CRD and an object of its kind in the same stream.
pub const CRD_AND_CR: &str = r"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names:
    kind: Certificate
    plural: certificates
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: shop-tls
spec:
  secretName: shop-tls
  dnsNames:
  - shop.example.com
  issuerRef:
    name: letsencrypt
    kind: ClusterIssuer
";
