#!/usr/bin/env bash
# Makes a robot's DDS Security key set with openssl: the CAs, one identity
# per process, the domain's governance (every channel authenticated,
# access-controlled and encrypted), and per process its permissions (which
# channels it may write and which it may read). Each process then runs with
# `--security=OUT/<process>` (cyber/transport/dds/dds_security.h names the
# files of that directory).
#
#   bash tools/make_security_set.sh OUT SPEC
#
# SPEC has one line per process (blank lines and # comments ignored):
#
#   <process> publish=/control/command,/planning/route/response subscribe=/sensor/imu
#
# (publish= and subscribe= may each come more than once.) A channel is named as in the graph ("/sensor/imu": the DDS topic has the
# channel's name); a service "/x" is the two channels "/x/request" and
# "/x/response" (a server publishes the response and subscribes to the
# request, a client the other way round). A process may write and read
# only what its line lists (and the graph topics every process announces
# itself on to the tools: /cyber/graph and /cyber/status, always granted);
# anything else it asks for is refused by DDS
# (its writer or reader is not made, and the program says so), and the
# other processes never accept its samples.
#
# OUT gets:
#   ca/identity_ca.{key,cert.pem}      signs every process's certificate
#   ca/permissions_ca.{key,cert.pem}   signs governance and permissions
#   governance.xml                     the rules, unsigned (to read)
#   <process>/identity_ca.cert.pem  cert.pem  key.pem
#            permissions_ca.cert.pem  governance.p7s
#            permissions.xml (to read)  permissions.p7s
# Keys are EC P-256 (what Fast-DDS's PKI-DH signs with), valid 10 years
# from today. Keep ca/*.key off the robot: only the per-process
# directories go there, each readable by its process alone (0700).
#
# DOMAINS (default "0 232") is the range of DDS domain ids the governance
# and permissions cover. An existing OUT is refused: a key set is made once.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 OUT SPEC" >&2
  exit 2
fi
out=$1
spec=$2
read -r dmin dmax <<<"${DOMAINS:-0 232}"
command -v openssl >/dev/null || { echo "$0: openssl is not installed (tools/setup.sh)" >&2; exit 1; }
[ -r "$spec" ] || { echo "$0: SPEC \"$spec\" cannot be read" >&2; exit 1; }
if [ -e "$out" ]; then
  echo "$0: OUT \"$out\" exists; a key set is made once, into a new directory" >&2
  exit 1
fi
umask 077
mkdir -p "$out/ca"
org="cyber robot"
not_before=$(date -u +%Y-%m-%dT%H:%M:%S)
not_after=$(date -u -d '+10 years' +%Y-%m-%dT%H:%M:%S)

# --- the two CAs ---------------------------------------------------------------
make_ca() {  # NAME
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca/$1.key" 2>/dev/null
  openssl req -x509 -new -sha256 -key "$out/ca/$1.key" -days 3650 \
    -subj "/O=$org/CN=$1" -addext "basicConstraints=critical,CA:TRUE" \
    -out "$out/ca/$1.cert.pem"
}
make_ca identity_ca
make_ca permissions_ca

sign() {  # IN OUT: S/MIME signed by the permissions CA
  openssl smime -sign -text -in "$1" -out "$2" \
    -signer "$out/ca/permissions_ca.cert.pem" -inkey "$out/ca/permissions_ca.key"
}

xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<<"$1"; }

# --- governance: everything protected ------------------------------------------
cat >"$out/governance.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Made by tools/make_security_set.sh: every participant authenticated
     (none joins without a certificate of this robot's identity CA), every
     channel access-controlled and encrypted, discovery and liveliness too. -->
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains>
        <id_range><min>$dmin</min><max>$dmax</max></id_range>
      </domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>ENCRYPT</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
EOF
sign "$out/governance.xml" "$out/ca/governance.p7s"

# --- one identity and one permissions file per process -----------------------
topics_xml() {  # comma-separated channels -> <topic> elements
  local IFS=, c
  for c in $1; do
    [ -n "$c" ] && printf '            <topic>%s</topic>\n' "$(xml_escape "$c")"
  done
}

made=0
while read -r process rest; do
  case "$process" in '' | '#'*) continue ;; esac
  if ! [[ "$process" =~ ^[A-Za-z0-9_.-]+$ ]]; then
    echo "$0: SPEC \"$spec\": process name \"$process\" is not [A-Za-z0-9_.-]+" >&2
    exit 1
  fi
  publish=
  subscribe=
  for word in $rest; do
    case "$word" in
      publish=*) publish="$publish,${word#publish=}" ;;
      subscribe=*) subscribe="$subscribe,${word#subscribe=}" ;;
      *)
        echo "$0: SPEC \"$spec\", process $process: \"$word\" is not publish=... or subscribe=..." >&2
        exit 1
        ;;
    esac
  done
  dir="$out/$process"
  mkdir -p "$dir"
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/key.pem" 2>/dev/null
  openssl req -new -sha256 -key "$dir/key.pem" -subj "/O=$org/CN=$process" -out "$dir/req.csr"
  openssl x509 -req -sha256 -days 3650 -in "$dir/req.csr" \
    -CA "$out/ca/identity_ca.cert.pem" -CAkey "$out/ca/identity_ca.key" -CAcreateserial \
    -out "$dir/cert.pem" 2>/dev/null
  rm -f "$dir/req.csr"
  cp "$out/ca/identity_ca.cert.pem" "$out/ca/permissions_ca.cert.pem" "$dir/"
  cp "$out/ca/governance.p7s" "$dir/governance.p7s"
  {
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Made by tools/make_security_set.sh from $(xml_escape "$(basename "$spec")"): what process
     "$process" may write (publish) and read (subscribe); nothing else. -->
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="$process">
      <subject_name>CN=$process,O=$org</subject_name>
      <validity>
        <not_before>$not_before</not_before>
        <not_after>$not_after</not_after>
      </validity>
      <allow_rule>
        <domains>
          <id_range><min>$dmin</min><max>$dmax</max></id_range>
        </domains>
EOF
    # Every process may announce itself to the tools and read its peers'
    # announcements (cyber/graph: /cyber/graph, /cyber/status; docs/tools.md).
    publish="${publish},/cyber/graph,/cyber/status"
    subscribe="${subscribe},/cyber/graph"
    if [ -n "${publish//,/}" ]; then
      printf '        <publish>\n          <topics>\n%s\n          </topics>\n        </publish>\n' \
        "$(topics_xml "$publish")"
    fi
    if [ -n "${subscribe//,/}" ]; then
      printf '        <subscribe>\n          <topics>\n%s\n          </topics>\n        </subscribe>\n' \
        "$(topics_xml "$subscribe")"
    fi
    cat <<EOF
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
EOF
  } >"$dir/permissions.xml"
  sign "$dir/permissions.xml" "$dir/permissions.p7s"
  made=$((made + 1))
done <"$spec"
rm -f "$out/ca/identity_ca.srl"
if [ "$made" -eq 0 ]; then
  echo "$0: SPEC \"$spec\" names no process" >&2
  exit 1
fi
echo "made a key set for $made process(es) in $out (run each with --security=$out/<process>)"
