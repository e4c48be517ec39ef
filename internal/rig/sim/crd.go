package sim

import (
	stdjson "encoding/json"
	"strings"
	"sync"
)

// CustomResourceDefinitions: a CRD written to the server (over HTTP or in
// process) makes its resource served, as the real server's apiextensions
// does, at once (no Established delay): the resource is registered with
// the storage version's names, scope, status subresource and printer
// columns, and the CRD's status gets the Established and NamesAccepted
// conditions and storedVersions. Its other served versions are served
// through conversion (versions.go): strategy None rewrites apiVersion,
// Webhook calls the conversion webhook's clientConfig.url with its
// caBundle. A resource already registered (Options.Resources) keeps its
// ResourceInfo, gaining the CRD's versions. Deleting a CRD leaves its
// resource served (the simulator does not remove resources).

const crdResource = "customresourcedefinitions.apiextensions.k8s.io"

// crdSpec is what the simulator reads of a CRD.
type crdSpec struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural     string   `json:"plural"`
			Singular   string   `json:"singular"`
			Kind       string   `json:"kind"`
			ShortNames []string `json:"shortNames"`
			Categories []string `json:"categories"`
		} `json:"names"`
		Scope      string       `json:"scope"`
		Versions   []crdVersion `json:"versions"`
		Conversion *struct {
			Strategy string `json:"strategy"`
			Webhook  *struct {
				ClientConfig struct {
					URL      *string `json:"url"`
					CABundle []byte  `json:"caBundle"`
				} `json:"clientConfig"`
				ConversionReviewVersions []string `json:"conversionReviewVersions"`
			} `json:"webhook"`
		} `json:"conversion"`
	} `json:"spec"`
}

type crdVersion struct {
	Name         string `json:"name"`
	Served       bool   `json:"served"`
	Storage      bool   `json:"storage"`
	Subresources struct {
		Status stdjson.RawMessage `json:"status"`
	} `json:"subresources"`
	PrinterColumns []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Format      string `json:"format"`
		Description string `json:"description"`
		Priority    int32  `json:"priority"`
		JSONPath    string `json:"jsonPath"`
	} `json:"additionalPrinterColumns"`
}

// crdRegistry holds the CRDs written, by resource key ("widgets.example.com").
type crdRegistry struct {
	mu   sync.RWMutex
	crds map[string]*crdSpec // guarded by mu
}

func (c *crdRegistry) get(key string) *crdSpec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.crds[key]
}

func (c *crdRegistry) put(key string, spec *crdSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crds == nil {
		c.crds = map[string]*crdSpec{}
	}
	c.crds[key] = spec
}

// storage is the CRD's storage version; "" when none is marked.
func (spec *crdSpec) storage() *crdVersion {
	for i := range spec.Spec.Versions {
		if spec.Spec.Versions[i].Storage {
			return &spec.Spec.Versions[i]
		}
	}
	return nil
}

func (spec *crdSpec) served(version string) bool {
	for _, v := range spec.Spec.Versions {
		if v.Name == version {
			return v.Served
		}
	}
	return false
}

// crdWritten registers the resource of a CRD just stored and completes its
// status, as the real server's CRD controllers do.
func (s *Server) crdWritten(o *object) {
	var spec crdSpec
	if err := stdjson.Unmarshal(o.raw, &spec); err != nil || spec.Spec.Group == "" || spec.Spec.Names.Plural == "" {
		return // the real server validates a CRD; the simulator serves only one it can read
	}
	st := spec.storage()
	if st == nil {
		return
	}
	key := spec.Spec.Names.Plural + "." + spec.Spec.Group
	s.crds.put(key, &spec)
	if _, err := s.store.lookup(key); err != nil {
		ri := ResourceInfo{Group: spec.Spec.Group, Version: st.Name, Resource: spec.Spec.Names.Plural,
			Singular: spec.Spec.Names.Singular, Kind: spec.Spec.Names.Kind, Namespaced: spec.Spec.Scope != "Cluster",
			ShortNames: spec.Spec.Names.ShortNames, Categories: spec.Spec.Names.Categories,
			StatusSubresource: len(st.Subresources.Status) > 0}
		for _, c := range st.PrinterColumns {
			ri.PrinterColumns = append(ri.PrinterColumns, PrinterColumn{Name: c.Name, Type: c.Type, Format: c.Format,
				Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath})
		}
		_ = s.store.register(ri) // a concurrent write of the same CRD registered it first
	}
	s.establishCRD(o, &spec, st.Name)
}

// establishCRD writes the status the real server's controllers give an
// accepted CRD, once.
func (s *Server) establishCRD(o *object, spec *crdSpec, storage string) {
	var m map[string]any
	if err := json.Unmarshal(o.raw, &m); err != nil {
		return
	}
	status, _ := m["status"].(map[string]any)
	if conds, _ := status["conditions"].([]any); len(conds) > 0 {
		return
	}
	now := formatTime(s.store.clock())
	cond := func(typ, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastTransitionTime": now, "reason": reason, "message": msg}
	}
	var names map[string]any
	if sp, ok := m["spec"].(map[string]any); ok {
		names, _ = sp["names"].(map[string]any)
	}
	m["status"] = map[string]any{
		"conditions": []any{cond("NamesAccepted", "NoConflicts", "no conflicts found"),
			cond("Established", "InitialNamesAccepted", "the initial names have been accepted")},
		"acceptedNames":  names,
		"storedVersions": []any{storage},
	}
	r, _ := s.store.lookup(crdResource)
	_, _, _ = s.commitWrite(writeOp{r: r, name: o.name, m: m, update: true, precondRV: o.rvString()})
}

// resolveVersion finds the resource served at group/version/plural when
// version is a CRD's served version other than its storage version; it
// returns nil otherwise.
func (s *Server) resolveVersion(group, version, plural string) *resource {
	if group == "" || strings.Contains(plural, ".") {
		return nil
	}
	spec := s.crds.get(plural + "." + group)
	if spec == nil || !spec.served(version) {
		return nil
	}
	r, err := s.store.lookup(plural + "." + group)
	if err != nil {
		return nil
	}
	return r
}
