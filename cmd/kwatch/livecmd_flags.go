package main

import "github.com/spf13/pflag"

// liveOptions are the flags of the live full-screen view
// (cmd/kwatch/internal/live); addLiveFlags defines them.
type liveOptions struct {
	// enabled: --live, the resource as a full-screen table updated in
	// place instead of a line per change (runLive).
	enabled bool
}

// addLiveFlags is where the live view's flags join the get command's flag
// set.
func addLiveFlags(flags *pflag.FlagSet, o *getOptions) {
	flags.BoolVar(&o.live.enabled, "live", false,
		"on a terminal, show the resource as a full-screen table updated in place (keys: / filter, n namespace, q quit)")
}
