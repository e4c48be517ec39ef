package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxDiscoveryBody bounds one discovery document.
const maxDiscoveryBody = 8 << 20

// Discover lists every resource the server serves, in the preferred version
// of each group, the core group first. The answer is cached; Refresh drops
// the cache.
func (c *Client) Discover(ctx context.Context) ([]Resource, error) {
	c.disc.mu.Lock()
	cached := c.disc.resources
	c.disc.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	res, err := c.discover(ctx)
	if err != nil {
		return nil, &OpError{Op: "discovery", Err: err}
	}
	c.disc.mu.Lock()
	c.disc.resources = res
	c.disc.mu.Unlock()
	return res, nil
}

// Refresh forgets the cached discovery answer.
func (c *Client) Refresh() {
	c.disc.mu.Lock()
	c.disc.resources = nil
	c.disc.mu.Unlock()
}

func (c *Client) discover(ctx context.Context) ([]Resource, error) {
	var groups metav1.APIGroupList
	if err := c.getJSON(ctx, "/apis", &groups); err != nil {
		return nil, err
	}
	gvs := []string{"v1"}
	for _, g := range groups.Groups {
		if v := g.PreferredVersion.GroupVersion; v != "" {
			gvs = append(gvs, v)
		} else if len(g.Versions) > 0 {
			gvs = append(gvs, g.Versions[0].GroupVersion)
		}
	}
	lists := make([][]Resource, len(gvs))
	errs := make([]error, len(gvs))
	// One request per group version, a few at a time: a real cluster has
	// dozens and each is a round trip.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, gv := range gvs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			lists[i], errs[i] = c.discoverGroupVersion(ctx, gv)
		}()
	}
	wg.Wait()
	var all []Resource
	for i, l := range lists {
		if errs[i] != nil {
			// The core group must answer; an aggregated group that is down
			// (metrics-server, say) must not hide every other resource.
			if i == 0 {
				return nil, errs[i]
			}
			continue
		}
		all = append(all, l...)
	}
	return all, nil
}

func (c *Client) discoverGroupVersion(ctx context.Context, gv string) ([]Resource, error) {
	path := "/apis/" + gv
	if gv == "v1" {
		path = "/api/v1"
	}
	var list metav1.APIResourceList
	if err := c.getJSON(ctx, path, &list); err != nil {
		return nil, err
	}
	group, version := "", gv
	if i := strings.IndexByte(gv, '/'); i >= 0 {
		group, version = gv[:i], gv[i+1:]
	}
	out := make([]Resource, 0, len(list.APIResources))
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") { // subresources such as pods/log
			continue
		}
		out = append(out, Resource{Group: group, Version: version, Resource: r.Name, Kind: r.Kind,
			Namespaced: r.Namespaced, ShortNames: r.ShortNames, Verbs: r.Verbs, singular: r.SingularName})
	}
	return out, nil
}

func (c *Client) getJSON(ctx context.Context, path string, into any) error {
	resp, err := c.Send(ctx, Request{Path: path})
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if len(body) > maxDiscoveryBody {
		return fmt.Errorf("GET %s: answer larger than %d bytes", path, maxDiscoveryBody)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: decoding: %w", path, err)
	}
	return nil
}

// Resolve finds the resource a user means by name: a plural ("pods"), a
// singular ("pod"), a short name ("po", "deploy"), a kind ("Pod"), or any of
// them qualified by group ("deployments.apps") or by version and group
// ("deployments.v1.apps"). Matching ignores case. When several groups serve
// the name, the core group wins, then the first group the server lists.
func (c *Client) Resolve(ctx context.Context, name string) (Resource, error) {
	all, err := c.Discover(ctx)
	if err != nil {
		return Resource{}, err
	}
	if r, ok := matchResource(all, name); ok {
		return r, nil
	}
	// A resource created since the cache was filled (a new CRD) needs a
	// fresh look before we say it does not exist.
	c.Refresh()
	if all, err = c.Discover(ctx); err != nil {
		return Resource{}, err
	}
	if r, ok := matchResource(all, name); ok {
		return r, nil
	}
	return Resource{}, &UnknownResourceError{Name: name}
}

// UnknownResourceError says discovery found no resource by the name asked.
type UnknownResourceError struct{ Name string }

func (e *UnknownResourceError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.Name)
}

func matchResource(all []Resource, name string) (Resource, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return Resource{}, false
	}
	base, group, version := name, "", ""
	if i := strings.IndexByte(name, '.'); i >= 0 {
		base, group = name[:i], name[i+1:]
		// "deployments.v1.apps": a version before the group.
		if j := strings.IndexByte(group, '.'); j >= 0 && looksLikeVersion(group[:j]) {
			version, group = group[:j], group[j+1:]
		}
	}
	for _, pass := range []func(Resource) bool{
		func(r Resource) bool { return r.Resource == base },
		func(r Resource) bool { return r.singularName() == base },
		func(r Resource) bool { return containsFold(r.ShortNames, base) },
	} {
		for _, r := range all {
			if group != "" && r.Group != group && !strings.HasPrefix(r.Group, group+".") {
				continue
			}
			if version != "" && r.Version != version {
				continue
			}
			if pass(r) {
				return r, true
			}
		}
	}
	return Resource{}, false
}

func looksLikeVersion(s string) bool {
	return len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// singularName is the singular the server reported, or the kind in lower case.
func (r Resource) singularName() string {
	if r.singular != "" {
		return r.singular
	}
	return strings.ToLower(r.Kind)
}
