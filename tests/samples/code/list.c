#include <stdlib.h>

#define MAX_LEN 64
#define SQUARE(x) ((x) * (x))

/* A node of the list. */
struct node {
    int value;
    struct node *next;
};

typedef struct node node_t;

typedef int (*compare_fn)(const void *, const void *);

enum color { RED, GREEN };

union number { int i; float f; };

static int count = 0;
const char *NAMES[] = {"a", "b"};

int list_length(const struct node *head);

// Push a value.
struct node *push(struct node *head, int value)
{
    struct node *n = malloc(sizeof *n);
    int helper(int);
    n->value = value;
    n->next = head;
    return n;
}

static void visit(struct node *head, void (*fn)(int))
{
    for (; head; head = head->next)
        fn(head->value);
}
