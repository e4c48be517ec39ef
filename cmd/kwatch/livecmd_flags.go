package main

import "github.com/spf13/pflag"

// liveOptions are the flags of the live full-screen view
// (cmd/kwatch/internal/live); addLiveFlags defines them.
type liveOptions struct{}

// addLiveFlags is where the live view's flags join the get command's flag
// set. It is empty until the live view lands.
func addLiveFlags(flags *pflag.FlagSet, o *getOptions) {
	_, _ = flags, o
}
