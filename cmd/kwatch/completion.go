package main

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// completionWait bounds a completion's requests: a shell waiting on a
// slow server is worse than no suggestions.
const completionWait = 5 * time.Second

// completionClient connects as the command line being completed says
// (--kubeconfig, --context, -s, ...). --sim has no server to ask yet.
func completionClient(e *env, o *getOptions) (*kube.Client, error) {
	cfg, err := loadConfig(o.conn, o.namespace, e)
	if err != nil {
		return nil, err
	}
	cfg.HTTP.Timeout = completionWait
	return kube.NewClient(cfg)
}

// completeTypes lists the resource types the server can list and watch,
// by plural name, as "kubectl get <TAB>" offers them.
func completeTypes(ctx context.Context, e *env, o *getOptions) ([]string, error) {
	c, err := completionClient(e, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, completionWait)
	defer cancel()
	all, err := c.Discover(ctx)
	if err != nil {
		return nil, err
	}
	// As kubectl offers them (its api-resources -o name): sorted by group,
	// the core group first, then by name; a grouped resource as
	// plural.group.
	type entry struct{ group, name string }
	var list []entry
	for _, r := range all {
		if strings.Contains(r.Resource, "/") || !slices.Contains(r.Verbs, "list") {
			continue
		}
		name := r.Resource
		if r.Group != "" {
			name += "." + r.Group
		}
		list = append(list, entry{r.Group, name})
	}
	slices.SortFunc(list, func(a, b entry) int { return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.name, b.name)) })
	names := make([]string, 0, len(list))
	for _, e := range list {
		names = append(names, e.name)
	}
	return slices.Compact(names), nil
}

// completeNames lists the names of the objects of a type, in the command
// line's namespace (or all of them with -A).
func completeNames(ctx context.Context, e *env, o *getOptions, typ string) ([]string, error) {
	c, err := completionClient(e, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, completionWait)
	defer cancel()
	res, err := resolve(ctx, c, typ)
	if err != nil {
		return nil, err
	}
	ns := ""
	if res.Namespaced && !o.allNamespaces {
		ns = c.Namespace()
	}
	list, err := watch.List[*printers.Object](ctx, c, res, kube.Scope{Namespace: ns, LabelSelector: o.selector}, watch.ListOptions{Limit: 500})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		names = append(names, it.GetName())
	}
	return names, nil
}
