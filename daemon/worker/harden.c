/* worker_harden(): the one place where the order of the hardening layers is written down. It
 * runs in a freshly forked worker before it reads any untrusted input, and fails closed: the
 * first failure of a required layer stops it (hardening_unavailable: harden_required_failed),
 * and the worker then dies (worker.c). */
#include "harden.h"

#include <stddef.h>
#include <unistd.h>

#include "harden_internal.h"
#include "pf_cleanup.h"

/* The layers in DESIGN.md's order: cgroup, namespaces, rlimits, fds+env, identity,
 * privileges, landlock, seccomp. A NULL apply means "this layer is not built yet": an error when
 * its level is required, skipped otherwise.
 *
 * Hardening engineer: when one of your layers lands (harden_cgroup*.c, harden_ns.c,
 * harden_identity.c, harden_caps.c, harden_landlock.c, harden_seccomp.c, each implementing the
 * prototype in harden_internal.h), replace its NULL below with the function, add its file to
 * `harden_layer_candidates` in meson.build if the name is not listed there, and raise its
 * default level in harden_params_init() (harden_params.c) if you want it on by default. */
static const struct {
    enum harden_layer layer;
    harden_apply_fn apply;
} layers[] = {
        {HARDEN_LAYER_CGROUP, harden_cgroup_apply},
        {HARDEN_LAYER_NAMESPACES, harden_namespaces_apply},
        {HARDEN_LAYER_RLIMITS, harden_rlimits_apply},
        {HARDEN_LAYER_FDS, harden_fds_apply},
        {HARDEN_LAYER_IDENTITY, harden_identity_apply},
        {HARDEN_LAYER_PRIVILEGES, harden_privileges_apply},
        {HARDEN_LAYER_LANDLOCK, harden_landlock_apply},
        {HARDEN_LAYER_SECCOMP, harden_seccomp_apply},
};

_Static_assert(PF_ELEMENTSOF(layers) == _HARDEN_LAYER_MAX, "one table entry per layer");

bool
harden_layer_built(enum harden_layer layer)
{
    for (size_t i = 0; i < PF_ELEMENTSOF(layers); i++)
        if (layers[i].layer == layer)
            return layers[i].apply != NULL;
    return false;
}

/* What an operator can do, when the layer's own message does not say it: without root,
 * harden_ns.c's does (there best-effort is raised to required, so only "off" runs without it). */
static const char *
what_to_do(enum harden_layer layer)
{
    if (geteuid() == 0)
        return "give pyfenced what it needs (`pyfenced --check` says what this host lacks; its "
               "--cgroup and --namespaces options can turn a layer off), or set the layer "
               "\"best-effort\" in the profile's \"hardening\" to run without it";
    if (layer == HARDEN_LAYER_NAMESPACES)
        return NULL;
    return "give pyfenced what it needs (`pyfenced --check` says what this host lacks), run it "
           "as root, or set the layer \"best-effort\" in the profile's \"hardening\" to run "
           "without it";
}

int
harden_required_failed(enum harden_layer layer, struct pf_error *lerr, struct pf_error **err)
{
    _cleanup_pf_error_ struct pf_error *cause = lerr;
    const char *name = harden_layer_name(layer);
    if (cause && cause->code == PF_E_WORKER_CRASHED)
        return pf_error_set(err, PF_E_WORKER_CRASHED, "hardening layer '%s': %s", name, cause->msg);
    const char *why = cause ? cause->msg : "out of memory";
    const char *todo = what_to_do(layer);
    return pf_error_set(err, PF_E_HARDENING_UNAVAILABLE,
                        "hardening layer '%s' is required and this host cannot give it: %s%s%s",
                        name, why, todo ? ". What to do: " : "", todo ? todo : "");
}

static int
apply_layer(size_t i, const struct harden_params *params, struct pf_error **err)
{
    enum harden_layer layer = layers[i].layer;
    enum harden_level level = params->level[layer];
    struct pf_error *lerr = NULL;

    switch (level) {
    case HARDEN_OFF:
        return 0;
    case HARDEN_BEST_EFFORT:
    case HARDEN_REQUIRED:
        break;
    case _HARDEN_LEVEL_MAX:
    case _HARDEN_LEVEL_INVALID:
    default:
        return pf_error_set(err, PF_E_INTERNAL, "hardening layer '%s': invalid level %d",
                            harden_layer_name(layer), (int) level);
    }
    if (!layers[i].apply) {
        if (level == HARDEN_BEST_EFFORT)
            return 0;
        pf_error_set(&lerr, PF_E_INTERNAL, "not built into this pyfence");
        return harden_required_failed(layer, lerr, err);
    }
    if (layers[i].apply(params, &lerr) >= 0)
        return 0;
    if (level == HARDEN_BEST_EFFORT) {
        /* Nothing to log to at this point (stderr may be /dev/null already): best-effort means
         * the profile accepted running without this layer. */
        pf_error_free(lerr);
        return 0;
    }
    return harden_required_failed(layer, lerr, err);
}

/* A change of credentials clears PR_SET_PDEATHSIG (prctl(2)), which the worker has had since
 * its fork (harden_job_fork) and the fds layer: the identity layer undoes it, so it is set again
 * right after, before seccomp could forbid the prctl, and the parent checked once more, since it
 * may have died in between. The zygote's pidfd that check reads is not needed past this point,
 * and goes before anything untrusted could use it. */
static int
after_identity(const struct harden_params *params, struct pf_error **err)
{
    int r = 0;
    if (params->level[HARDEN_LAYER_IDENTITY] != HARDEN_OFF && harden_fds_die_with_parent(err) < 0)
        r = pf_error_prefix(err, "hardening layer 'fds' (after 'identity')");
    harden_fds_forget_parent();
    return r;
}

int
worker_harden(const struct harden_params *params, int channel_fd, struct pf_error **err)
{
    /* The channel goes to its fixed place first, so that no layer can close it by accident. */
    int fd = harden_fds_move_channel(channel_fd, err);
    if (fd < 0)
        return -1;
    for (size_t i = 0; i < PF_ELEMENTSOF(layers); i++) {
        if (apply_layer(i, params, err) < 0)
            return -1;
        if (layers[i].layer == HARDEN_LAYER_IDENTITY && after_identity(params, err) < 0)
            return -1;
    }
    return fd;
}
