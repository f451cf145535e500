// The pod sandbox ("pause") binary for the testbed's local pause image.
module labrun.local/testbed/pause

go 1.26.0
