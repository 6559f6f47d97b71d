//go:build tools

// Package tools pins the command this module builds, so `go mod tidy` keeps its dependencies.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
