package runner

import (
	"fmt"
	"slices"

	"github.com/labrun/labrun/actions"
	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/leaf/secret"
)

// Env is what the expressions of a run in mode see before its first
// step: the mode, the env names the playbook reads (their values from
// getenv) and every variable, evaluated in order. The values of secret
// variables and env names go to secrets, when it is not nil. A run starts
// from it; so does what is derived from a plan without running it (the
// permissions its steps need, runner/access).
func (p *Plan) Env(mode actions.Mode, getenv func(string) string, secrets *secret.Redactor) (*eval.Env, error) {
	env := p.compiler.NewEnv()
	env.SetMode(eval.ModeSolve)
	if mode == actions.Check {
		env.SetMode(eval.ModeCheck)
	}
	for _, name := range p.EnvNames {
		env.SetEnv(name, getenv(name))
		if secrets != nil && slices.Contains(p.Secret, name) {
			secrets.Add(getenv(name))
		}
	}
	for _, v := range p.Vars {
		if v.Value == nil {
			continue
		}
		x, err := v.Value.Eval(env)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		if secrets != nil && slices.Contains(p.Secret, v.Name) {
			addSecret(secrets, eval.Plain(x))
		}
		if err := env.SetVar(v.Name, eval.Plain(x)); err != nil {
			return nil, err
		}
	}
	return env, nil
}
