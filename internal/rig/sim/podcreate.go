package sim

import (
	stdjson "encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sort"
)

// The QoS classes of a pod, as Kubernetes defines them.
const (
	qosBestEffort = "BestEffort"
	qosBurstable  = "Burstable"
	qosGuaranteed = "Guaranteed"
)

// qosResources are the resources a QoS class is computed from.
var qosResources = []string{"cpu", "memory"}

// requirements are one container's (or the pod's) parsed requests and limits.
type requirements struct {
	requests, limits map[string]*big.Rat
}

// preparePodCreate does to a pod sent by a client what the real server does on
// create: the spec gets its defaults (see defaultPodSpec), requests default to
// limits where only limits are given, and the sent
// status is replaced by {phase: Pending, qosClass: <computed>}. Quantities that do not
// parse are a 400 (as the real server's decoding fails); negative ones and requests
// above limits are a 422.
func preparePodCreate(name string, m map[string]any) *StatusError {
	spec, serr := childObject(m, "spec", "spec")
	if serr != nil {
		return serr
	}
	defaultPodSpec(spec)
	m["spec"] = spec
	var containers []requirements
	for _, field := range []string{"initContainers", "containers"} {
		list, ok := spec[field].([]any)
		if !ok && spec[field] != nil {
			return errPodDecode(fmt.Sprintf("spec.%s: must be a list of containers", field))
		}
		for i, c := range list {
			path := fmt.Sprintf("spec.%s[%d]", field, i)
			cm, ok := c.(map[string]any)
			if !ok {
				return errPodDecode(path + ": must be an object")
			}
			req, serr := containerRequirements(name, cm, path, true)
			if serr != nil {
				return serr
			}
			containers = append(containers, req)
		}
	}
	qos, serr := podQOS(name, spec, containers)
	if serr != nil {
		return serr
	}
	m["status"] = map[string]any{"phase": "Pending", "qosClass": qos}
	return nil
}

// podQOS computes the pod's QoS class: from the pod-level resources when they name
// cpu or memory (the PodLevelResources feature, on by default), else from every
// container, init containers included.
func podQOS(name string, spec map[string]any, containers []requirements) (string, *StatusError) {
	if spec["resources"] != nil {
		pod, serr := containerRequirements(name, spec, "spec", false)
		if serr != nil {
			return "", serr
		}
		for _, res := range qosResources {
			if pod.requests[res] != nil || pod.limits[res] != nil {
				return requirementsQOS(pod), nil
			}
		}
	}
	qos := ""
	for _, c := range containers {
		switch cq := requirementsQOS(c); {
		case cq == qosBurstable:
			return qosBurstable, nil
		case qos == "":
			qos = cq
		case qos != cq: // one BestEffort and one Guaranteed container
			return qosBurstable, nil
		}
	}
	if qos == "" {
		qos = qosBestEffort
	}
	return qos, nil
}

// requirementsQOS classifies one set of requests and limits: Guaranteed when cpu and
// memory requests equal their limits and are not zero, BestEffort when none is set,
// Burstable otherwise.
func requirementsQOS(r requirements) string {
	if len(r.requests) == 0 && len(r.limits) == 0 {
		return qosBestEffort
	}
	qos := ""
	zero := new(big.Rat)
	for _, res := range qosResources {
		req, lim := r.requests[res], r.limits[res]
		if req == nil {
			req = zero
		}
		if lim == nil {
			lim = zero
		}
		rq := qosGuaranteed
		switch {
		case req.Cmp(lim) != 0:
			return qosBurstable
		case req.Sign() == 0:
			rq = qosBestEffort
		}
		if qos != "" && qos != rq { // some but not all of cpu and memory set
			return qosBurstable
		}
		qos = rq
	}
	return qos
}

// containerRequirements parses obj.resources (a container's, or the pod spec's for
// pod-level resources). When defaultRequests is set, limits without a request are
// copied into requests in obj, as the real server's pod defaulting does.
func containerRequirements(name string, obj map[string]any, path string, defaultRequests bool) (requirements, *StatusError) {
	var out requirements
	res, serr := childObject(obj, "resources", path+".resources")
	if serr != nil {
		return out, serr
	}
	reqs, serr := childObject(res, "requests", path+".resources.requests")
	if serr != nil {
		return out, serr
	}
	lims, serr := childObject(res, "limits", path+".resources.limits")
	if serr != nil {
		return out, serr
	}
	if out.limits, serr = parseResourceList(name, lims, path+".resources.limits"); serr != nil {
		return out, serr
	}
	if out.requests, serr = parseResourceList(name, reqs, path+".resources.requests"); serr != nil {
		return out, serr
	}
	for k, lim := range out.limits {
		if out.requests[k] == nil {
			out.requests[k] = lim
			if defaultRequests {
				reqs[k] = lims[k]
			}
		}
	}
	if defaultRequests && len(reqs) > 0 {
		res["requests"] = reqs
	}
	if len(res) > 0 {
		obj["resources"] = res
	}
	return out, validateRequests(name, out, reqs, lims, path+".resources.requests")
}

// validateRequests refuses requests above their limits, as the real validation does.
// reqs and lims are the quantities as sent, for the message.
func validateRequests(name string, r requirements, reqs, lims map[string]any, path string) *StatusError {
	keys := make([]string, 0, len(r.requests))
	for k := range r.requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if lim := r.limits[k]; lim != nil && r.requests[k].Cmp(lim) > 0 {
			return errInvalid("", "Pod", name, StatusCause{Reason: "FieldValueInvalid", Field: path + "[" + k + "]",
				Message: fmt.Sprintf("Invalid value: %q: must be less than or equal to %s limit of %s",
					fmt.Sprint(reqs[k]), k, fmt.Sprint(lims[k]))})
		}
	}
	return nil
}

// parseResourceList parses a requests or limits map of quantities.
func parseResourceList(name string, list map[string]any, path string) (map[string]*big.Rat, *StatusError) {
	out := make(map[string]*big.Rat, len(list))
	for k, v := range list {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case stdjson.Number: // the codec keeps numbers as written
			s = x.String()
		default:
			return nil, errPodDecode(fmt.Sprintf("%s[%s]: a quantity must be a string or a number", path, k))
		}
		q, err := parseQuantity(s)
		if err != nil {
			return nil, errPodDecode(path + "[" + k + "]: " + err.Error())
		}
		if q.Sign() < 0 {
			return nil, errInvalid("", "Pod", name, StatusCause{Reason: "FieldValueInvalid", Field: path + "[" + k + "]",
				Message: fmt.Sprintf("Invalid value: %q: must be greater than or equal to 0", s)})
		}
		out[k] = q
	}
	return out, nil
}

// childObject returns m[key] as an object, or an empty one (not stored) when absent.
func childObject(m map[string]any, key, path string) (map[string]any, *StatusError) {
	switch v := m[key].(type) {
	case map[string]any:
		return v, nil
	case nil:
		return map[string]any{}, nil
	default:
		return nil, errPodDecode(path + ": must be an object")
	}
}

// errPodDecode is the 400 the real server gives for a pod body it cannot decode.
func errPodDecode(detail string) *StatusError {
	return newStatus(http.StatusBadRequest, "BadRequest",
		`Pod in version "v1" cannot be handled as a Pod: `+detail, nil)
}
