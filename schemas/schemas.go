// Package schemas holds the JSON Schemas labrun publishes for what it
// writes, embedded, so that labrun itself can check a file against the
// same text its readers are given: check --rerun-failed validates the
// report it reads against Report.
package schemas

import _ "embed"

// Report is schemas/report.schema.json, the schema of a JSON report.
//
//go:embed report.schema.json
var Report []byte

// ReportFile is Report's path in the repository, for messages.
const ReportFile = "schemas/report.schema.json"
