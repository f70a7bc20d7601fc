#!/usr/bin/env bash
# Checks what engine plugins export. For each shared library given, reads its dynamic
# symbol table (`nm -gD --defined-only`) and fails when
#   - it exports a symbol that is not in plugin-sdk/symbols.allowlist (a stray export can
#     clash with another plugin's: the backend dlopens every plugin into one process), or
#   - an allowlisted entry point is exported as data rather than code, or
#   - a symbol the hipDNN host requires is missing (it would refuse to load the plugin).
#   scripts/check-plugin-symbols.sh PLUGIN.so [PLUGIN.so...]
# Exit status: 0 all plugins pass; 1 some plugin fails; 2 usage error or unreadable file.
# Environment: NM (default `nm`), HIPDNN_SYMBOLS_ALLOWLIST (default: the committed list).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
allowlist="${HIPDNN_SYMBOLS_ALLOWLIST:-$root/plugin-sdk/symbols.allowlist}"
nm="${NM:-nm}"

# What the host resolves with a plain (failing) lookup: four base entry points and the
# twelve engine entry points. Everything else in the allowlist is optional.
required=(
    hipdnnPluginGetName
    hipdnnPluginGetVersion
    hipdnnPluginGetType
    hipdnnPluginGetLastErrorString
    hipdnnEnginePluginGetAllEngineIds
    hipdnnEnginePluginCreate
    hipdnnEnginePluginDestroy
    hipdnnEnginePluginSetStream
    hipdnnEnginePluginGetApplicableEngineIds
    hipdnnEnginePluginGetEngineDetails
    hipdnnEnginePluginDestroyEngineDetails
    hipdnnEnginePluginGetWorkspaceSize
    hipdnnEnginePluginCreateExecutionContext
    hipdnnEnginePluginDestroyExecutionContext
    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext
    hipdnnEnginePluginExecuteOpGraph
)

# Names some linkers add to the dynamic table of every shared library, whatever its
# sources say: `_init`/`_fini` (from the C runtime start files) and the section-boundary
# markers `_edata`, `_end`, `__bss_start`. Older GNU ld releases export them; binutils
# 2.40 (Debian 12) and Rust cdylibs (linked with a version script that lists only the
# `#[no_mangle]` items) do not. -fvisibility=hidden does not hide them, so flagging them
# would fail plugins for their toolchain, and they cannot clash in practice: the host looks up
# only hipdnn* names, and `_init`/`_fini` are reached through the library's own dynamic
# section, never by name. So they are skipped when present and counted in the summary.
# (Symbols of type `A`, absolute, are skipped too: in a shared library they are the
# version-node names a version script defines, such as `PLUGIN_1.0`, not code or data.)
linker_provided=" _init _fini _edata _end __bss_start "

if [[ $# -eq 0 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
if [[ ! -r "$allowlist" ]]; then
    echo "error: cannot read allowlist $allowlist" >&2
    exit 2
fi

declare -A allowed=()
while IFS= read -r line || [[ -n "$line" ]]; do
    line="${line%%#*}"
    line="${line//[[:space:]]/}"
    [[ -n "$line" ]] && allowed["$line"]=1
done <"$allowlist"
for sym in "${required[@]}"; do
    if [[ -z "${allowed[$sym]:-}" ]]; then
        echo "error: required symbol $sym is missing from $allowlist" >&2
        exit 2
    fi
done

status=0
for plugin in "$@"; do
    if [[ ! -f "$plugin" ]]; then
        echo "error: $plugin: no such file" >&2
        exit 2
    fi
    if ! table="$("$nm" -gD --defined-only "$plugin" 2>&1)"; then
        echo "error: $plugin: $nm failed: $table" >&2
        exit 2
    fi

    declare -A exported=()
    problems=()
    skipped=0
    # Each line is "ADDRESS TYPE NAME"; versioned names carry "@VER" or "@@VER".
    while read -r -a fields; do
        [[ ${#fields[@]} -ge 2 ]] || continue
        type="${fields[${#fields[@]}-2]}"
        name="${fields[${#fields[@]}-1]}"
        name="${name%%@*}"
        if [[ "$type" == A || "$linker_provided" == *" $name "* ]]; then
            skipped=$((skipped + 1))
            continue
        fi
        exported["$name"]="$type"
        if [[ -z "${allowed[$name]:-}" ]]; then
            problems+=("not in the allowlist: $name (type $type)")
        elif [[ "$type" != [TtWi] ]]; then
            # T/t: text, W: weak code, i: GNU indirect function; anything else is data.
            problems+=("exported as data, not code: $name (type $type)")
        fi
    done <<<"$table"

    optional=0
    for sym in "${!exported[@]}"; do
        [[ -n "${allowed[$sym]:-}" ]] && optional=$((optional + 1))
    done
    for sym in "${required[@]}"; do
        if [[ -z "${exported[$sym]:-}" ]]; then
            problems+=("required symbol missing: $sym")
        else
            optional=$((optional - 1))
        fi
    done

    if [[ ${#problems[@]} -gt 0 ]]; then
        for problem in "${problems[@]}"; do
            echo "$plugin: $problem" >&2
        done
        status=1
    else
        note=""
        [[ $skipped -gt 0 ]] && note=" ($skipped linker or version-node symbols ignored)"
        echo "OK $plugin: ${#required[@]} required + $optional optional entry points," \
            "nothing else exported$note"
    fi
    unset exported
done
exit $status
