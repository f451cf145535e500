package runner

import (
	"path/filepath"
	"reflect"
	"regexp"
	"slices"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/syntax"
	"github.com/labrun/labrun/internal/leaf/secret"
	"gopkg.in/yaml.v3"
)

// The playbook's declarations that steps read: variables, env names,
// secrets, the output directory and named expressions.

// vars declares the playbook's variables in order, each with its value
// (the default, or an override) and the type that value gives it; a
// variable's value may read only those above it.
func (c *compiler) vars(overrides map[string]override) {
	var names []string
	for _, v := range c.pb.Vars {
		names = append(names, v.Name)
	}
	for name, o := range overrides {
		if !slices.Contains(names, name) {
			c.errs.Add(o.pos(), "%sthe playbook has no variable %q%s", o.prefix(), name, diag.DidYouMean(name, names))
		}
	}
	for _, v := range c.pb.Vars {
		c.ec.DeclareLaterVar(v.Name, v.Pos)
	}
	for _, v := range c.pb.Vars {
		t := varType(v.Value)
		node, file := v.Value, c.file
		if o, ok := overrides[v.Name]; ok {
			node = c.fitOverride(v, o)
			if o.file != "" {
				file = o.file
			} else {
				file = "--set"
			}
		}
		val, errs := eval.Build(c.ec, file, node, eval.Context{Step: -1})
		if len(errs) == 0 {
			errs = eval.CheckNumbers(val)
		}
		c.errs = append(c.errs, errs...)
		if val != nil && len(errs) == 0 {
			if vt := exprType(val); vt != nil {
				t = vt
			}
		}
		c.ec.DeclareVar(v.Name, t)
		c.plan.Vars = append(c.plan.Vars, &VarPlan{Name: v.Name, Type: t, Value: val})
	}
}

// exprType is the static type of a value that is one whole expression.
func exprType(v *eval.Value) reflect.Type {
	if e := v.WholeExpr(); e != nil {
		return e.Type
	}
	return nil
}

// env declares the env names expressions read as env.NAME, refusing a
// name env.NAME cannot spell and a name declared twice.
func (c *compiler) env() {
	first := map[string]diag.Pos{}
	for _, e := range c.pb.Env {
		if !envNameRe.MatchString(e.Value) {
			c.errs.Add(e.Pos, "env name %q can never be read as env.NAME: expected letters, digits and _, not starting with a digit", e.Value)
			continue
		}
		if p, dup := first[e.Value]; dup {
			c.errs.Add(e.Pos, "env name %s is declared twice (first at %s)", e.Value, p)
			continue
		}
		first[e.Value] = e.Pos
		c.plan.EnvNames = append(c.plan.EnvNames, e.Value)
	}
	c.ec.DeclareEnv(c.plan.EnvNames)
}

// envNameRe is what env.NAME can read: an identifier.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secrets collects the secret names: those listed, which must be declared
// variables or env names, and those secret.Name recognises.
func (c *compiler) secrets() {
	var declared []string
	for _, v := range c.pb.Vars {
		declared = append(declared, v.Name)
	}
	declared = append(declared, c.plan.EnvNames...)
	for _, s := range c.pb.Secret {
		if !slices.Contains(declared, s.Value) {
			c.errs.Add(s.Pos, "secret %q is neither a variable nor an env name of this playbook%s", s.Value, diag.DidYouMean(s.Value, declared))
		}
	}
	for _, name := range declared {
		if secret.Name(name) || slices.ContainsFunc(c.pb.Secret, func(t syntax.Text) bool { return t.Value == name }) {
			c.plan.Secret = append(c.plan.Secret, name)
		}
	}
}

// outputDir builds the output directory's value, which must be a
// non-empty path: a literal, or an expression giving a string.
func (c *compiler) outputDir() {
	od := c.pb.OutputDir
	if !od.IsSet() {
		return
	}
	node := od.Node
	if node.Kind == yaml.ScalarNode && node.Tag != "!!str" {
		// a path is a string: outputDir: 2024 is the directory 2024,
		// as written, like any string field
		n := *node
		n.Tag = "!!str"
		node = &n
	}
	v, errs := eval.Build(c.ec, c.file, node, eval.Context{Step: -1})
	c.errs = append(c.errs, errs...)
	if lit, ok := v.Literal(); ok && lit == "" {
		c.errs.Add(od.Pos, "outputDir is empty; expected a directory path")
	}
	if e := v.WholeExpr(); e != nil && e.Type != nil && e.Type.Kind() != reflect.String && e.Type.Kind() != reflect.Interface {
		c.errs.Add(e.Pos, "outputDir must be a directory path, but `%s` is %s", e.Src, eval.PlainTypes(e.Type.String()))
	}
	c.plan.OutputDir = v
}

// outputDirLiteral is the output directory when the playbook writes it
// without expressions, made absolute as the run will; "" otherwise.
func (c *compiler) outputDirLiteral() string {
	if c.plan.OutputDir == nil {
		return ""
	}
	lit, ok := c.plan.OutputDir.Literal()
	s, _ := lit.(string)
	if !ok || s == "" {
		return ""
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return ""
	}
	return abs
}

// varText is the value of variable name when it is a string written as
// it is (in the playbook, a --vars file or --set), for the paths a static
// check reads (actions.StaticContext).
func (c *compiler) varText(name string) (string, bool) {
	for _, v := range c.plan.Vars {
		if v.Name == name && v.Value != nil {
			lit, ok := v.Value.Literal()
			s, isText := lit.(string)
			return s, ok && isText
		}
	}
	return "", false
}

// defines declares the playbook's named expressions, after the variables
// they may read and before the steps that use them.
func (c *compiler) defines() {
	var defs []eval.Definition
	for _, d := range c.pb.Define {
		src, off := bareExpression(d.Expr)
		defs = append(defs, eval.Definition{Name: d.Name, Pos: d.Pos, Src: src, At: c.ec.InScalar(d.Expr.Pos, d.Expr.Node, off)})
	}
	c.ec.DeclareDefines(defs)
	for _, d := range defs {
		if err := c.ec.Define(d); err != nil {
			c.errs.Append(err)
		}
	}
}
