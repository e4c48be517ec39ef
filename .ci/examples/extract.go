package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// decl is one top-level declaration of a test package: a function, a
// method, or one spec (type, var, const) of a declaration group.
type decl struct {
	file *ast.File
	node ast.Node // *ast.FuncDecl, or the *ast.GenDecl holding only this spec
	name string   // the name it declares; a method's is its receiver type's
}

// extract returns the source of a package holding p's Examples and what
// they use of p's external test files, and the number of Examples.
func extract(p pkg, names map[string]string) ([]byte, int, error) {
	fset := token.NewFileSet()
	var decls []decl
	for _, f := range p.XTestGoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		decls = append(decls, split(file)...)
	}
	byName := map[string][]int{}
	var queue []int
	for i, d := range decls {
		byName[d.name] = append(byName[d.name], i)
		if fd, ok := d.node.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
			queue = append(queue, i)
		}
	}
	examples := len(queue)
	if examples == 0 {
		return nil, 0, nil
	}
	// What the Examples use, transitively: every identifier naming a
	// top-level declaration pulls it in (a type pulls in its methods).
	keep := map[int]bool{}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if keep[i] {
			continue
		}
		keep[i] = true
		ast.Inspect(decls[i].node, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				queue = append(queue, byName[id.Name]...)
			}
			return true
		})
	}
	idx := make([]int, 0, len(keep))
	for i := range keep {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	src, err := render(fset, p.Name+"example", decls, idx, names)
	return src, examples, err
}

// split lists a file's top-level declarations one by one.
func split(f *ast.File) []decl {
	var out []decl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvType(d.Recv.List[0].Type)
			}
			out = append(out, decl{file: f, node: d, name: name})
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, s := range d.Specs {
				g := &ast.GenDecl{Tok: d.Tok, Lparen: d.Lparen, Specs: []ast.Spec{s}, Rparen: d.Rparen}
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, decl{file: f, node: g, name: s.Name.Name})
				case *ast.ValueSpec:
					for _, n := range s.Names {
						out = append(out, decl{file: f, node: g, name: n.Name})
					}
				}
			}
		}
	}
	return out
}

// recvType is the name of a method's receiver type (T, *T, T[P], *T[P]).
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// render prints the kept declarations as package name, with the imports
// of their files that they use.
func render(fset *token.FileSet, name string, decls []decl, idx []int, names map[string]string) ([]byte, error) {
	used := map[*ast.File]map[string]bool{}
	var body bytes.Buffer
	seen := map[ast.Node]bool{}
	for _, i := range idx {
		d := decls[i]
		if seen[d.node] { // a var spec declaring two kept names
			continue
		}
		seen[d.node] = true
		if used[d.file] == nil {
			used[d.file] = map[string]bool{}
		}
		ast.Inspect(d.node, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[d.file][id.Name] = true
				}
			}
			return true
		})
		if err := printer.Fprint(&body, fset, d.node); err != nil {
			return nil, err
		}
		body.WriteString("\n\n")
	}
	imports := map[string]string{} // path -> the name it is imported under
	for f, u := range used {
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return nil, err
			}
			local := names[path]
			if spec.Name != nil {
				local = spec.Name.Name
			}
			if local == "" {
				return nil, fmt.Errorf("%s: no package name known for import %q", fset.Position(spec.Pos()).Filename, path)
			}
			if u[local] || local == "_" {
				imports[path] = local
			}
		}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code copied from the Examples of the godoc by .ci/examples.\n\npackage %s\n\nimport (\n", name)
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&out, "\t%s %q\n", imports[p], p)
	}
	out.WriteString(")\n\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}
