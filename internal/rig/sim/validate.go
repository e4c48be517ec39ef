package sim

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validation of client writes, worded as the real server words it
// (status-422-invalid.json): the object's name (a DNS-1123 subdomain, a DNS-1123
// label for namespaces and services; generateName as a prefix) on create, and the
// keys of configmaps' and secrets' data on every write; and the request options
// (dryRun, fieldManager, force). Everything else is accepted as sent.

const (
	msgSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
		"and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
		`'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	msgLabel = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must " +
		"start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation " +
		"is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	msgConfigKey = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  " +
		"or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
	maxSubdomain = 253
	maxLabel     = 63
)

var (
	subdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	configKeyRE = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

func lengthMsg(n int) string { return "must be no more than " + strconv.Itoa(n) + " characters" }

// subdomainErrors are the problems of a DNS-1123 subdomain.
func subdomainErrors(s string) []string {
	var errs []string
	if len(s) > maxSubdomain {
		errs = append(errs, lengthMsg(maxSubdomain))
	}
	if !subdomainRE.MatchString(s) {
		errs = append(errs, msgSubdomain)
	}
	return errs
}

// labelErrors are the problems of a DNS-1123 label: a valid subdomain is only
// told that it has dots.
func labelErrors(s string) []string {
	var errs []string
	if len(s) > maxLabel {
		errs = append(errs, lengthMsg(maxLabel))
	}
	if !labelRE.MatchString(s) {
		if subdomainRE.MatchString(s) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, msgLabel)
		}
	}
	return errs
}

func configKeyErrors(s string) []string {
	var errs []string
	if len(s) > maxSubdomain {
		errs = append(errs, lengthMsg(maxSubdomain))
	}
	if !configKeyRE.MatchString(s) {
		errs = append(errs, msgConfigKey)
	}
	switch {
	case s == ".":
		errs = append(errs, "must not be '.'")
	case s == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(s, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

func invalidCauses(field, value string, msgs []string) []StatusCause {
	var out []StatusCause
	for _, m := range msgs {
		out = append(out, StatusCause{Reason: "FieldValueInvalid", Message: "Invalid value: " + strconv.Quote(value) + ": " + m, Field: field})
	}
	return out
}

// validateObject checks a client's write of m (named name); create adds the
// checks of the name.
func validateObject(r *resource, m map[string]any, name string, create bool) *StatusError {
	var causes []StatusCause
	nameErrors := subdomainErrors
	if k := r.info.key(); k == "namespaces" || k == "services" {
		nameErrors = labelErrors
	}
	if create {
		if gen := metaString(m, "generateName"); gen != "" {
			// A prefix may end in '-': the generated suffix follows it.
			masked := gen
			if strings.HasSuffix(masked, "-") && len(masked) > 1 {
				masked = masked[:len(masked)-1] + "a"
			}
			causes = append(causes, invalidCauses("metadata.generateName", gen, nameErrors(masked))...)
		}
		causes = append(causes, invalidCauses("metadata.name", name, nameErrors(name))...)
		if r.info.key() == "namespaces" && len(name) > maxLabel {
			// The kubernetes.io/metadata.name label carries the name.
			causes = append(causes, StatusCause{Reason: "FieldValueInvalid",
				Message: "Invalid value: " + strconv.Quote(name) + ": must be no more than 63 bytes", Field: "metadata.labels"})
		}
	}
	switch r.info.key() {
	case "configmaps":
		causes = append(causes, dataKeyCauses(m, "data", "data", "binaryData")...)
		causes = append(causes, dataKeyCauses(m, "binaryData", "binaryData", "")...)
	case "secrets":
		causes = append(causes, dataKeyCauses(m, "data", "data", "")...)
		causes = append(causes, dataKeyCauses(m, "stringData", "data", "")...)
	case validatingConfigs, mutatingConfigs:
		causes = append(causes, sideEffectsCauses(m)...)
	}
	if len(causes) == 0 {
		return nil
	}
	return errInvalid(r.info.Group, r.info.Kind, name, causes...)
}

// dataKeyCauses checks the keys of m[field] (reported as report[key]); a key also
// in m[other] is a duplicate.
func dataKeyCauses(m map[string]any, field, report, other string) []StatusCause {
	data, _ := m[field].(map[string]any)
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	others, _ := m[other].(map[string]any)
	var causes []StatusCause
	for _, k := range keys {
		f := report + "[" + k + "]"
		causes = append(causes, invalidCauses(f, k, configKeyErrors(k))...)
		if _, dup := others[k]; dup {
			causes = append(causes, invalidCauses(f, k, []string{"duplicate of key present in " + other})...)
		}
	}
	return causes
}

// writeOptions are the query options of a create, update, patch or apply.
type writeOptions struct {
	dryRun       bool
	fieldManager string
	force        bool
}

// parseWriteOptions reads and checks dryRun, fieldManager and force; kind is
// "Create", "Update" or "Patch" (naming the options in errors); apply says the
// patch is a server-side apply.
func parseWriteOptions(q url.Values, kind string, apply bool) (writeOptions, *StatusError) {
	var o writeOptions
	var causes []StatusCause
	dry, c := parseDryRun(q)
	o.dryRun, causes = dry, c
	o.fieldManager = q.Get("fieldManager")
	if len(o.fieldManager) > maxFieldManager {
		causes = append(causes, StatusCause{Reason: "FieldValueTooLong",
			Message: "Too long: may not be more than 128 bytes", Field: "fieldManager"})
	}
	if apply && o.fieldManager == "" {
		causes = append(causes, StatusCause{Reason: "FieldValueRequired",
			Message: "Required value: is required for apply patch", Field: "fieldManager"})
	}
	if vs, ok := q["force"]; ok {
		// As the real server reads a boolean parameter: anything but 0, f or false is true.
		v := strings.ToLower(vs[0])
		o.force = v != "0" && v != "f" && v != "false"
		if o.force && !apply {
			causes = append(causes, StatusCause{Reason: "FieldValueForbidden",
				Message: "Forbidden: may not be specified for non-apply patch", Field: "force"})
		}
	}
	if len(causes) > 0 {
		return o, errInvalid("meta.k8s.io", kind+"Options", "", causes...)
	}
	return o, nil
}

// parseDryRun reads dryRun: only All is supported.
func parseDryRun(q url.Values) (bool, []StatusCause) {
	vs := q["dryRun"]
	for _, v := range vs {
		if v != "All" {
			list, _ := json.Marshal(vs)
			return false, []StatusCause{{Reason: "FieldValueNotSupported",
				Message: "Unsupported value: " + string(list) + `: supported values: "All"`, Field: "dryRun"}}
		}
	}
	return len(vs) > 0, nil
}

// sideEffectsCauses checks what admissionregistration.k8s.io/v1 requires of
// each webhook's sideEffects: None or NoneOnDryRun (Some and Unknown were
// v1beta1's), so a v1 webhook always takes dry runs.
func sideEffectsCauses(m map[string]any) []StatusCause {
	hooks, _ := m["webhooks"].([]any)
	var causes []StatusCause
	for i, h := range hooks {
		hm, _ := h.(map[string]any)
		field := "webhooks[" + strconv.Itoa(i) + "].sideEffects"
		switch v, ok := hm["sideEffects"].(string); {
		case !ok:
			causes = append(causes, StatusCause{Reason: "FieldValueRequired", Message: "Required value", Field: field})
		case v != "None" && v != "NoneOnDryRun":
			causes = append(causes, StatusCause{Reason: "FieldValueNotSupported",
				Message: "Unsupported value: " + strconv.Quote(v) + `: supported values: "None", "NoneOnDryRun"`, Field: field})
		}
	}
	return causes
}
