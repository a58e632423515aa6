/* An intrusive doubly linked list (the kernel's list_head, sway's wl_list): the daemon keeps its
 * connections and jobs on these, so removing one is O(1) and needs no allocation. */
#ifndef DAEMON_DLIST_H
#define DAEMON_DLIST_H

#include <stdbool.h>
#include <stddef.h>

struct dlist {
    struct dlist *prev, *next;
};

static inline void
dlist_init(struct dlist *head)
{
    head->prev = head->next = head;
}

static inline bool
dlist_empty(const struct dlist *head)
{
    return head->next == head;
}

static inline void
dlist_insert_tail(struct dlist *head, struct dlist *node)
{
    node->prev = head->prev;
    node->next = head;
    head->prev->next = node;
    head->prev = node;
}

/* Unlinks node and leaves it self-linked, so a second remove is harmless. */
static inline void
dlist_remove(struct dlist *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->prev = node->next = node;
}

/* Iterates over a list while the current element may be removed. */
#define DLIST_FOREACH_SAFE(pos, tmp, head)                           \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
         (pos) = (tmp), (tmp) = (pos)->next)

#endif
