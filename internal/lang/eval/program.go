package eval

import (
	"errors"
	"reflect"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// compileTree checks and compiles a parsed expression.
func (c *Compiler) compileTree(tree *parser.Tree, sc scope, want reflect.Kind) (*vm.Program, reflect.Type, error) {
	cfg, et, err := c.checkTree(tree, sc, want)
	if err != nil {
		return nil, nil, err
	}
	prog, err := bytecode(tree, cfg, want)
	return prog, et, err
}

// checkTree type-checks and optimizes a parsed expression against the
// configuration of scope sc, and returns that configuration, which its
// bytecode must be made with, and the scope's environment type; the tree
// is parsed once and shared with checkRefs. Every error a playbook's
// author can cause is found here: what is left for bytecode is expr's own
// translation of a checked tree.
func (c *Compiler) checkTree(tree *parser.Tree, sc scope, want reflect.Kind) (*conf.Config, reflect.Type, error) {
	cfg, et := c.config(sc)
	if err := checkWith(tree, cfg, want); err != nil {
		return nil, nil, err
	}
	return cfg, et, nil
}

// checkWith type-checks and optimizes a parsed expression against cfg.
func checkWith(tree *parser.Tree, cfg *conf.Config, want reflect.Kind) error {
	expect(cfg, want)
	if _, err := new(checker.Checker).PatchAndCheck(tree, cfg); err != nil {
		return err
	}
	rewriteEqualities(&tree.Node)
	if err := optimizer.Optimize(&tree.Node, cfg); err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return fe.Bind(tree.Source)
		}
		return err
	}
	// after the optimizer, which builds new nodes (filter(...)[0] becomes
	// find) with natures of its own
	ast.Walk(&tree.Node, &structNatures{cache: &cfg.NtCache})
	return nil
}

// preciseType is the Go type of a nature, with the element types expr
// tracks for lists: filter(list of T, ...) has reflect type []any but
// element nature T, and a compute step that keeps such a list must store
// []T, so that T's methods still work on results restored from the
// journal.
func preciseType(n nature.Nature) reflect.Type {
	if n.Type == nil {
		return nil
	}
	if (n.Kind == reflect.Slice || n.Kind == reflect.Array) && n.Ref != nil && n.Type.Elem().Kind() == reflect.Interface {
		if elem := preciseType(*n.Ref); elem != nil && elem.Kind() != reflect.Interface {
			return reflect.SliceOf(elem)
		}
	}
	return n.Type
}

// structNatures gives every struct-typed node the nature of the
// configuration's cache. expr 1.17's optimizer builds natures for the nodes
// it creates without a cache (filter(x, ...)[0] becomes find(x, ...)), and
// the compiler then finds no field table in a struct nature and panics on
// a member access such as filter(parseNetstat(x), ...)[0].foreign; natures
// from the cache carry the table.
type structNatures struct{ cache *nature.Cache }

func (v *structNatures) Visit(node *ast.Node) {
	n := (*node).Nature()
	if n.Kind == reflect.Struct && n.Type != nil {
		(*node).SetNature(v.cache.FromType(n.Type))
	}
}

// expect sets the kind the checker and compiler hold a result to; the
// configuration is shared by every expression of its scope, so it is set
// before each use (under Compiler.mu).
func expect(cfg *conf.Config, want reflect.Kind) {
	cfg.Expect, cfg.ExpectAny = reflect.Invalid, false
	if want == reflect.Bool {
		cfg.Expect, cfg.ExpectAny = reflect.Bool, true
	}
}

// bytecode compiles a checked tree; the caller holds Compiler.mu.
func bytecode(tree *parser.Tree, cfg *conf.Config, want reflect.Kind) (*vm.Program, error) {
	expect(cfg, want)
	return compiler.Compile(tree, cfg)
}

// lazyProgram is a checked expression's bytecode, compiled once, when it
// first runs. cfg is the configuration it was checked against (a changed
// layout drops it from Compiler.configs, not from here). An expression
// that took the check of another of its shape (shape.go) has no tree of
// its own: src is parsed and checked against cfg first.
type lazyProgram struct {
	once sync.Once
	src  string // set when tree is nil
	tree *parser.Tree
	cfg  *conf.Config
	want reflect.Kind
	prog *vm.Program
	err  error
}

// program returns the bytecode of x, compiling it the first time.
func (x *Expr) program() (*vm.Program, error) {
	p := x.prog
	p.once.Do(func() {
		c := x.compiler
		c.mu.Lock()
		defer c.mu.Unlock()
		if p.tree == nil {
			if p.tree, p.err = c.parse(p.src, p.cfg); p.err != nil {
				return
			}
			if p.err = checkWith(p.tree, p.cfg, p.want); p.err != nil {
				return
			}
		}
		p.prog, p.err = bytecode(p.tree, p.cfg, p.want)
		p.tree = nil
	})
	return p.prog, p.err
}
