package writes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
)

// Verb is one kind of request.
type Verb string

// The verbs, in the order they run.
const (
	Create Verb = "create"
	Get    Verb = "get"
	Update Verb = "update"
	Patch  Verb = "patch"
	Delete Verb = "delete"
)

// Verbs are every verb.
var Verbs = []Verb{Create, Get, Update, Patch, Delete}

// Case is one verb on one kind through one row: Setup prepares n
// iterations, each Step sends one request, Teardown deletes what Setup and
// the steps left. Steps run in order, from 0 to n-1, on one goroutine.
type Case interface {
	Setup(ctx context.Context, n int) error
	Step(ctx context.Context, i int) error
	Teardown(ctx context.Context) error
}

// object is what the fixtures are: a typed k8s.io/api object (a pointer).
type object interface{ metav1.Object }

// runs numbers the cases, so that each writes objects of its own names
// (a benchmark's runs, one after another, share a server).
var runs atomic.Int64

// verbCase is a Case for every verb; what Step does depends on verb.
// Everything a step needs is prepared by Setup, so a step allocates only
// in the client.
type verbCase[T object] struct {
	verb  Verb
	row   Row
	ops   ops[T]   // the row's client: Step
	admin ops[T]   // Setup and Teardown
	fresh func() T // a new fixture, without a name

	obj    T        // create: the object sent, renamed each step; others: the last answer
	names  []string // create and delete: one per step; others: the one object's
	values []string // update: the annotation's value at each step
	bodies [][]byte // patch: the patch of each step
	done   int      // steps that succeeded
}

func newCase[T object](verb Verb, row Row, fresh func() T, o, admin ops[T]) *verbCase[T] {
	return &verbCase[T]{verb: verb, row: row, ops: o, admin: admin, fresh: fresh}
}

func (c *verbCase[T]) Setup(ctx context.Context, n int) error {
	prefix := fmt.Sprintf("%s-%d-", c.verb, runs.Add(1))
	c.obj = c.fresh()
	c.done = 0
	switch c.verb {
	case Create, Delete:
		c.names = make([]string, n)
		for i := range c.names {
			c.names[i] = prefix + strconv.Itoa(i)
		}
	default:
		c.names = []string{prefix + "0"}
	}
	switch c.verb {
	case Update:
		c.values = make([]string, n)
		for i := range c.values {
			c.values[i] = strconv.Itoa(i + 1)
		}
	case Patch:
		c.bodies = make([][]byte, n)
		for i := range c.bodies {
			c.bodies[i] = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"%d"}}}`, annotationKey, i+1)
		}
	}
	if c.verb == Create {
		return nil
	}
	for _, name := range c.names {
		obj := c.fresh()
		obj.SetName(name)
		got, err := c.admin.create(ctx, obj)
		if err != nil {
			return fmt.Errorf("setup of %s: %w", c.verb, err)
		}
		c.obj = got
	}
	return nil
}

func (c *verbCase[T]) Step(ctx context.Context, i int) error {
	var err error
	switch c.verb {
	case Create:
		c.obj.SetName(c.names[i])
		_, err = c.ops.create(ctx, c.obj)
	case Get:
		c.obj, err = c.ops.get(ctx, c.names[0])
	case Update:
		c.obj.GetAnnotations()[annotationKey] = c.values[i]
		c.obj, err = c.ops.update(ctx, c.obj)
	case Patch:
		c.obj, err = c.ops.mergePatch(ctx, c.names[0], c.bodies[i])
	case Delete:
		err = c.ops.delete(ctx, c.names[i])
	}
	if err != nil && c.verb == Delete && c.row.Proto && !c.row.KWatch && apierrors.IsBadRequest(err) {
		return fmt.Errorf("%s %d: %w: %w", c.verb, i, ErrProtoDeleteRefused, err)
	}
	if err != nil {
		return fmt.Errorf("%s %d: %w", c.verb, i, err)
	}
	c.done++
	return nil
}

func (c *verbCase[T]) Teardown(ctx context.Context) error {
	var errs []error
	for i, name := range c.names {
		if c.verb == Delete && i < c.done {
			continue
		}
		if c.verb == Create && i >= c.done {
			break
		}
		if err := c.admin.delete(ctx, name); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("teardown of %s: %w", c.verb, err))
		}
	}
	return errors.Join(errs...)
}

// ErrProtoDeleteRefused is a delete from client-go-proto answered 400
// Bad Request: client-go sends every delete a DeleteOptions body, in
// protobuf for this row, and a server that reads DeleteOptions only as
// JSON (as the simulator did when this was written) refuses it. The real
// server reads it. The row cannot be measured against such a server.
var ErrProtoDeleteRefused = errors.New("the server refused a protobuf DeleteOptions body")

// isNotFound is a 404 from either client.
func isNotFound(err error) bool { return kube.IsNotFound(err) || apierrors.IsNotFound(err) }
