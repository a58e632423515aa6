#include "load.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin_profiles.h"
#include "pf_cleanup.h"

#define POLICY_MAX_FILE_BYTES (1024 * 1024)
#define POLICY_MAX_PROFILES   256

static void
closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

struct policy *
policy_free(struct policy *p)
{
    if (!p)
        return NULL;
    for (size_t i = 0; i < p->n; i++)
        policy_profile_free(p->profiles[i]);
    free(p->profiles);
    free(p->source);
    free(p);
    return NULL;
}

static int
compare_profiles(const void *a, const void *b)
{
    const struct policy_profile *const *pa = a, *const *pb = b;
    return strcmp((*pa)->name, (*pb)->name);
}

static int
policy_add(struct policy *p, struct policy_profile *profile, const char *origin,
           struct pf_error **err)
{
    if (p->n >= POLICY_MAX_PROFILES) {
        policy_profile_free(profile);
        return pf_error_set(err, PF_E_CONFIG, "%s: more than %d profiles", origin,
                            POLICY_MAX_PROFILES);
    }
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->profiles[i]->name, profile->name) == 0) {
            pf_error_set(err, PF_E_CONFIG, "%s: a second profile named '%s'", origin,
                         profile->name);
            policy_profile_free(profile);
            return -1;
        }
    struct policy_profile **grown = realloc(p->profiles, (p->n + 1) * sizeof(*grown));
    if (!grown) {
        policy_profile_free(profile);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    grown[p->n++] = profile;
    p->profiles = grown;
    return 0;
}

static int
policy_seal(struct policy *p, struct pf_error **err)
{
    qsort(p->profiles, p->n, sizeof(*p->profiles), compare_profiles);
    if (!policy_find(p, "default"))
        return pf_error_set(err, PF_E_CONFIG,
                            "%s: no profile named 'default' (every policy "
                            "needs one: it is what a peer gets when it names none)",
                            p->source);
    return 0;
}

static const char *
file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "a special file";
}

static int
read_file(int dirfd, const char *name, const char *origin, char **ret, size_t *ret_len,
          struct pf_error **err)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, and the daemon's loop
     * with it (fstat then refuses it, as anything not a regular file); it does not change how
     * a regular file reads. O_NOCTTY: a terminal device must not become our controlling tty. */
    _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    /* A link could point a profile at a file whoever owns its target may edit. */
    if (fd < 0 && errno == ELOOP)
        return pf_error_set(err, PF_E_CONFIG,
                            "%s: a symbolic link (a profile must be a regular file)", origin);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "%s: cannot open", origin);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "%s: cannot stat", origin);
    if (!S_ISREG(st.st_mode))
        return pf_error_set(err, PF_E_CONFIG,
                            "%s: not a regular file but %s (a profile must be one)", origin,
                            file_kind(st.st_mode));
    if (st.st_size > POLICY_MAX_FILE_BYTES)
        return pf_error_set(err, PF_E_CONFIG, "%s: %lld bytes exceed the maximum of %d", origin,
                            (long long) st.st_size, POLICY_MAX_FILE_BYTES);
    _cleanup_free_ char *buf = malloc((size_t) st.st_size + 1);
    if (!buf)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    size_t have = 0;
    while (have < (size_t) st.st_size) {
        ssize_t n = read(fd, buf + have, (size_t) st.st_size - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return pf_error_set_errno(err, PF_E_CONFIG, errno, "%s: cannot read", origin);
        if (n == 0)
            break;
        have += (size_t) n;
    }
    buf[have] = '\0';
    *ret_len = have;
    *ret = TAKE_PTR(buf);
    return 0;
}

int
policy_load_dir(const char *dir, struct policy **ret, struct pf_error **err)
{
    __attribute__((cleanup(closedirp))) DIR *d = opendir(dir);
    if (!d)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "policy directory '%s'", dir);
    struct policy *p = calloc(1, sizeof(*p));
    if (!p || !(p->source = strdup(dir))) {
        free(p);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    struct dirent *de;
    while ((errno = 0, de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        char origin[4200], stem[256];
        snprintf(origin, sizeof(origin), "%s/%s", dir, de->d_name);
        snprintf(stem, sizeof(stem), "%.*s", (int) (len - 5), de->d_name);
        _cleanup_free_ char *text = NULL;
        size_t text_len = 0;
        struct policy_profile *profile = NULL;
        if (read_file(dirfd(d), de->d_name, origin, &text, &text_len, err) < 0 ||
            policy_profile_parse(text, text_len, origin, stem, &profile, err) < 0 ||
            policy_add(p, profile, origin, err) < 0) {
            policy_free(p);
            return -1;
        }
    }
    if (errno != 0) {
        pf_error_set_errno(err, PF_E_CONFIG, errno, "policy directory '%s': cannot list", dir);
        policy_free(p);
        return -1;
    }
    if (policy_seal(p, err) < 0) {
        policy_free(p);
        return -1;
    }
    *ret = p;
    return 0;
}

int
policy_load_builtin(struct policy **ret, struct pf_error **err)
{
    struct policy *p = calloc(1, sizeof(*p));
    if (!p || !(p->source = strdup("built-in"))) {
        free(p);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    for (size_t i = 0; i < PF_ELEMENTSOF(builtin_profiles); i++) {
        char origin[128];
        snprintf(origin, sizeof(origin), "built-in profiles/%s.json", builtin_profiles[i].name);
        struct policy_profile *profile = NULL;
        if (policy_profile_parse(builtin_profiles[i].text, strlen(builtin_profiles[i].text), origin,
                                 builtin_profiles[i].name, &profile, err) < 0 ||
            policy_add(p, profile, origin, err) < 0) {
            policy_free(p);
            return -1;
        }
    }
    if (policy_seal(p, err) < 0) {
        policy_free(p);
        return -1;
    }
    *ret = p;
    return 0;
}

const struct policy_profile *
policy_find(const struct policy *p, const char *name)
{
    for (size_t i = 0; name && i < p->n; i++)
        if (strcmp(p->profiles[i]->name, name) == 0)
            return p->profiles[i];
    return NULL;
}

const struct policy_profile *
policy_resolve(const struct policy *p, const char *name, const struct policy_peer *peer,
               struct pf_error **err)
{
    const struct policy_profile *profile = policy_find(p, name);
    if (!profile || !policy_profile_allows(profile, peer)) {
        pf_error_set(err, PF_E_NOT_FOUND, "no profile '%s' for uid %u", name, (unsigned) peer->uid);
        return NULL;
    }
    return profile;
}

const struct policy_profile *
policy_default_for(const struct policy *p, const struct policy_peer *peer, struct pf_error **err)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct policy_profile *profile = p->profiles[i];
        if (!policy_profile_is_default_for(profile, peer))
            continue;
        /* The peer never named this profile: refusing it by name would tell the peer that a
         * profile it may not use exists, and what it is called. */
        if (!policy_profile_allows(profile, peer)) {
            pf_error_set(err, PF_E_NOT_FOUND, "no default profile for uid %u",
                         (unsigned) peer->uid);
            return NULL;
        }
        return profile;
    }
    return policy_resolve(p, "default", peer, err);
}
