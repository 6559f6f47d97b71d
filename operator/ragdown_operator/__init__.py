"""ragdown's Kubernetes operator (kopf): RagdownFolder resources to folder settings and ingress routes."""
