#!/bin/bash
# Killercoda runs this in the background when the scenario starts. labrun
# and the lab (tasks.yaml and tasks/hosts.txt, as in labrun's examples/)
# must be on the host: here from /opt/labs, which you provision (a
# download of your labrun release, or files your scenario copies there).
set -euo pipefail
command -v labrun
test -f /opt/labs/tasks.yaml
test -f /opt/labs/tasks/hosts.txt
mkdir -p /root/tasks
