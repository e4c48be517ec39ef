package sim

import (
	"strings"
)

// outputMode is the representation a client asked for in its Accept header.
type outputMode int

const (
	modeObject     outputMode = iota // the objects themselves
	modeMeta                         // PartialObjectMetadata(List)
	modeTable                        // meta.k8s.io Table
	modeAggregated                   // apidiscovery.k8s.io APIGroupDiscoveryList (discovery only)
)

// negotiate picks the first acceptable media range of an Accept header. ok is false
// when the header names only representations the simulator cannot produce (protobuf,
// CBOR, unknown "as" kinds).
func negotiate(accept string, allowAggregated bool) (mode outputMode, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return modeObject, true
	}
	for _, rng := range strings.Split(accept, ",") {
		parts := strings.Split(rng, ";")
		mt := strings.ToLower(strings.TrimSpace(parts[0]))
		if mt != "application/json" && mt != "*/*" && mt != "application/*" {
			continue
		}
		params := map[string]string{}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			params[strings.ToLower(k)] = strings.TrimSpace(v)
		}
		switch as := params["as"]; as {
		case "":
			return modeObject, true
		case "Table":
			if params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
				return modeTable, true
			}
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
				return modeMeta, true
			}
		case "APIGroupDiscoveryList":
			if allowAggregated && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" {
				return modeAggregated, true
			}
		}
	}
	return modeObject, false
}

// contentType is the Content-Type the real server labels each representation with.
func contentType(mode outputMode, list bool) string {
	switch mode {
	case modeMeta:
		if list {
			return "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
		}
		return "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	case modeTable:
		return "application/json;as=Table;g=meta.k8s.io;v=v1"
	case modeAggregated:
		return "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	}
	return "application/json"
}
