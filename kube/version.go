package kube

// Version is kwatch's version, sent in the User-Agent.
var Version = "0.1.0-dev"

func defaultUserAgent() string { return "kwatch/" + Version }
