package store

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPanickingFunctionRefusesTheWriteAndKeepsTheStore: a key or index
// function's panic is the write's *PanicError, nothing of the write is
// applied, and the store is as before.
func TestAPanickingFunctionRefusesTheWriteAndKeepsTheStore(t *testing.T) {
	s := New(Options[obj]{
		Key: func(o obj) (string, error) {
			if o.Labels["key"] == "boom" {
				panic("key boom")
			}
			return MetaKey(o)
		},
		Indexers: map[string]IndexFunc[obj]{"app": func(o obj) ([]string, error) {
			if o.Labels["boom"] == "yes" {
				panic("index boom")
			}
			return appIndex(o)
		}},
	})
	_, _, err := s.Upsert(mk("ns", "a", "app=web"), "1")
	require.NoError(t, err)

	_, _, err = s.Upsert(mk("ns", "a", "app=db", "boom=yes"), "2")
	p, ok := errors.AsType[*PanicError](err)
	require.True(t, ok, "got %v", err)
	require.Equal(t, `index "app"`, p.Func)
	require.Equal(t, "index boom", p.Value)
	require.NotEmpty(t, p.Stack)
	got, ok := s.Get("ns/a")
	require.True(t, ok)
	require.Equal(t, "web", got.Labels["app"], "nothing of the refused write is applied")
	keys, err := s.IndexKeys("app", "web")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/a"}, keys)

	_, _, err = s.Upsert(mk("ns", "b", "key=boom"), "3")
	p, ok = errors.AsType[*PanicError](err)
	require.True(t, ok, "got %v", err)
	require.Equal(t, "key function", p.Func)
	require.ErrorIs(t, err, ErrInvalidKey)
	_, ok = s.Get("ns/b")
	require.False(t, ok)

	r := s.NewReplacement()
	_, ok = errors.AsType[*PanicError](r.Add(mk("ns", "c", "boom=yes")))
	require.True(t, ok)
}

// TestAPanicOnAnOldVersionScrubsItsKey: a panic while an old version's
// values are recomputed (on update or delete) scrubs its key from that
// index, as an error does: no index keeps a value the object lost.
func TestAPanicOnAnOldVersionScrubsItsKey(t *testing.T) {
	armed := false
	s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{"app": func(o obj) ([]string, error) {
		if armed && o.Labels["v"] == "1" {
			panic("old boom")
		}
		return appIndex(o)
	}}})
	for _, name := range []string{"a", "b"} {
		_, _, err := s.Upsert(mk("ns", name, "app=web", "v=1"), "1")
		require.NoError(t, err)
	}
	armed = true
	_, _, err := s.Upsert(mk("ns", "a", "app=db", "v=2"), "2")
	require.NoError(t, err, "the new version indexes fine")
	_, existed := s.Delete("ns/b", "3")
	require.True(t, existed)

	web, err := s.IndexKeys("app", "web")
	require.NoError(t, err)
	require.Empty(t, web)
	db, err := s.IndexKeys("app", "db")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/a"}, db)
}
