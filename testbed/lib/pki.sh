# shellcheck shell=bash
# Certificates and kubeconfigs of the testbed (sourced by `up`).
# Made once with openssl and kept across down/up, so the kubeconfig a user
# copied stays valid. One CA signs everything; EC P-256 keys keep it fast.

# _cert NAME CN O SANS KIND: key + cert signed by the CA. KIND is server|client|both.
_cert() {
  local name=$1 cn=$2 o=$3 sans=$4 kind=$5
  [[ -f $PKI/$name.crt && -f $PKI/$name.key ]] && return 0
  local subj="/CN=$cn"; [[ -n $o ]] && subj="/O=$o$subj"
  local eku="clientAuth"
  case $kind in server) eku="serverAuth" ;; both) eku="serverAuth,clientAuth" ;; esac
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n $sans ]] && echo "subjectAltName=$sans"
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

# _kubeconfig FILE SERVER CERTNAME: kubeconfig with embedded client cert.
_kubeconfig() {
  local file=$1 server=$2 cert=$3
  cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: labrun-testbed
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $cert
  user:
    client-certificate-data: $(base64 -w0 "$PKI/$cert.crt")
    client-key-data: $(base64 -w0 "$PKI/$cert.key")
contexts:
- name: labrun-testbed
  context: {cluster: labrun-testbed, user: $cert}
current-context: labrun-testbed
EOF
  chmod 600 "$file.tmp"; mv "$file.tmp" "$file"
}

make_pki() {
  mkdir -p "$PKI"; chmod 700 "$PKI"
  if [[ ! -f $PKI/ca.crt ]]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=labrun-testbed-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "$PKI/ca.crt" 2>/dev/null
  fi
  _cert apiserver kube-apiserver "" \
    "IP:$NODE_IP,IP:127.0.0.1,IP:$KUBERNETES_SVC_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$NODE_NAME" server
  _cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" client
  _cert admin kubernetes-admin system:masters "" client
  _cert controller-manager system:kube-controller-manager "" "" client
  _cert scheduler system:kube-scheduler "" "" client
  # Each node's kubelet joins with its own credentials, as a real worker's
  # does after its bootstrap: system:node:<name> in system:nodes (what the
  # Node authorizer and NodeRestriction check), and a serving certificate
  # for its InternalIP.
  local i
  for ((i = 1; i <= NODES; i++)); do
    _cert "$(node_comp "$i" kubelet)" "system:node:$(node_name "$i")" system:nodes "" client
    _cert "$(node_comp "$i" kubelet-serving)" "$(node_name "$i")" "" "IP:$(node_ip "$i"),DNS:$(node_name "$i")" server
  done
  if [[ ! -f $PKI/sa.key ]]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/sa.key" 2>/dev/null
    openssl ec -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  local api="https://$NODE_IP:$APISERVER_PORT"
  _kubeconfig "$KUBECONFIG_PATH" "$api" admin
  _kubeconfig "$STATE/controller-manager.kubeconfig" "$api" controller-manager
  _kubeconfig "$STATE/scheduler.kubeconfig" "$api" scheduler
  for ((i = 1; i <= NODES; i++)); do
    _kubeconfig "$STATE/$(node_comp "$i" kubelet).kubeconfig" "$api" "$(node_comp "$i" kubelet)"
  done
}
