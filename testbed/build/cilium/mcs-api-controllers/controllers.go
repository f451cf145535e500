// Package controllers is a stub holding the one identifier Cilium 1.20 uses
// from sigs.k8s.io/mcs-api/controllers (value copied from mcs-api v0.5.x).
package controllers

// DerivedServiceAnnotation is set on a ServiceImport to reference the derived
// Service that represents the imported service.
const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
