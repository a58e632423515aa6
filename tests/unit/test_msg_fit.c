/* Fitting messages to a frame (proto/msg_fit.h): text measured as json_write writes it, cut
 * between characters, and exec replies brought under a limit in the order that loses least. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "json_write.h"
#include "msg.h"
#include "msg_fit.h"
#include "pf_cleanup.h"

/* Size of obj as json_write writes it. */
static size_t
json_size(const cJSON *obj)
{
    _cleanup_free_ char *buf = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    size_t len = 0;
    assert_int_equal(json_write(obj, 0, SIZE_MAX, &buf, &len, &err), 0);
    return len;
}

static void
test_json_size_counts_escapes(void **state)
{
    (void) state;
    /* Each measure is checked against the writer itself. */
    static const char *const texts[] = {"plain", "a\"b\\c", "\n\r\t\b\f", "\x01\x1f", "é€😀", ""};
    for (size_t i = 0; i < PF_ELEMENTSOF(texts); i++) {
        _cleanup_json_ cJSON *s = cJSON_CreateString(texts[i]);
        assert_int_equal(msg_fit_json_size(texts[i], strlen(texts[i])) + 2, json_size(s));
    }
    assert_int_equal(msg_fit_json_size("\x01", 1), 6);
}

static void
test_prefix_and_suffix_keep_whole_characters(void **state)
{
    (void) state;
    const char *s = "ab\x01é€"; /* JSON sizes 1, 1, 6, 2, 3 */
    size_t len = strlen(s);
    assert_int_equal(msg_fit_prefix(s, len, 0), 0);
    assert_int_equal(msg_fit_prefix(s, len, 2), 2);
    assert_int_equal(msg_fit_prefix(s, len, 7), 2); /* \x01 needs 6 */
    assert_int_equal(msg_fit_prefix(s, len, 8), 3);
    assert_int_equal(msg_fit_prefix(s, len, 9), 3); /* not half of é */
    assert_int_equal(msg_fit_prefix(s, len, 10), 5);
    assert_int_equal(msg_fit_prefix(s, len, 100), len);
    assert_int_equal(msg_fit_suffix(s, len, 2), 0); /* not two bytes of € */
    assert_int_equal(msg_fit_suffix(s, len, 3), 3);
    assert_int_equal(msg_fit_suffix(s, len, 5), 5);
    assert_int_equal(msg_fit_suffix(s, len, 10), 5);
    assert_int_equal(msg_fit_suffix(s, len, 11), 6);
    assert_int_equal(msg_fit_suffix(s, len, 100), len);
}

static void
test_cut_keeps_head_and_tail_within_budget(void **state)
{
    (void) state;
    _cleanup_free_ char *same = msg_fit_cut("short", 5, "[cut]");
    assert_string_equal(same, "short");
    _cleanup_free_ char *cut = msg_fit_cut("0123456789abcdefghij", 15, "[cut]");
    assert_string_equal(cut, "01234[cut]fghij");
    /* Escapes count: each \x01 is 6 bytes. */
    _cleanup_free_ char *esc = msg_fit_cut("\x01\x01\x01\x01xyz", 13, "|");
    assert_string_equal(esc, "\x01|xyz");
    assert_true(msg_fit_json_size(esc, strlen(esc)) <= 13);
    /* No room for the marker: the head alone. */
    _cleanup_free_ char *head = msg_fit_cut("0123456789", 3, "[cut]");
    assert_string_equal(head, "012");
}

static cJSON *
reply_with(const char *logs, const char *message, const char *output)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "id", 7);
    cJSON_AddBoolToObject(r, "ok", message == NULL);
    cJSON_AddStringToObject(r, "outcome", message ? "error" : "ok");
    if (output) {
        cJSON_AddStringToObject(r, "output", output);
        cJSON_AddStringToObject(r, "output_repr", output);
    } else {
        cJSON_AddNullToObject(r, "output");
        cJSON_AddNullToObject(r, "output_repr");
    }
    cJSON_AddStringToObject(r, "logs", logs);
    cJSON_AddFalseToObject(r, "is_final_answer");
    if (message) {
        cJSON *e = cJSON_AddObjectToObject(r, "error");
        cJSON_AddStringToObject(e, "code", "error");
        cJSON_AddStringToObject(e, "message", message);
        cJSON_AddStringToObject(e, "source", "raise X");
    }
    cJSON *stats = cJSON_AddObjectToObject(r, "stats");
    cJSON_AddNumberToObject(stats, "ops", 3);
    return r;
}

static char *
repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void
test_reply_that_fits_is_unchanged(void **state)
{
    (void) state;
    _cleanup_json_ cJSON *r = reply_with("hi\n", NULL, "42");
    _cleanup_json_ cJSON *before = cJSON_Duplicate(r, 1);
    assert_int_equal(msg_fit_exec_reply(r, 4096, "max_frame_bytes"), 0);
    assert_true(cJSON_Compare(r, before, 1));
}

static void
test_texts_are_cut_before_the_result_goes(void **state)
{
    (void) state;
    _cleanup_free_ char *logs = repeat('l', 10000);
    _cleanup_json_ cJSON *r = reply_with(logs, NULL, "42");
    assert_int_equal(msg_fit_exec_reply(r, 2000, "max_frame_bytes"), 0);
    assert_true(json_size(r) <= 2000);
    assert_string_equal(msg_get_string(r, "outcome", ""), "ok");
    assert_string_equal(msg_get_string(r, "output", ""), "42");
    const char *cut = msg_get_string(r, "logs", "");
    assert_non_null(strstr(cut, "cut to fit max_frame_bytes (2000 bytes)"));
    assert_true(cut[0] == 'l' && cut[strlen(cut) - 1] == 'l');
}

static void
test_small_texts_keep_their_share(void **state)
{
    (void) state;
    /* The short message stays whole; the long logs take what is left. */
    _cleanup_free_ char *logs = repeat('l', 10000);
    _cleanup_json_ cJSON *r = reply_with(logs, "short message", NULL);
    assert_int_equal(msg_fit_exec_reply(r, 3000, "max_frame_bytes"), 0);
    size_t size = json_size(r);
    assert_true(size <= 3000 && size > 2900);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
    assert_string_equal(msg_get_string(e, "message", ""), "short message");
    assert_string_equal(msg_get_string(e, "source", ""), "raise X");
}

static void
test_result_too_large_for_any_cut_is_left_out(void **state)
{
    (void) state;
    _cleanup_free_ char *big = repeat('x', 5000);
    _cleanup_free_ char *logs = repeat('l', 5000);
    _cleanup_json_ cJSON *r = reply_with(logs, NULL, big);
    assert_int_equal(msg_fit_exec_reply(r, 4096, "max_frame_bytes"), 0);
    assert_true(json_size(r) <= 4096);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok")));
    assert_string_equal(msg_get_string(r, "outcome", ""), "output_limit");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "output")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "output_repr")));
    cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
    assert_string_equal(msg_get_string(e, "code", ""), "output_limit");
    assert_non_null(strstr(msg_get_string(e, "message", ""),
                           "left out: the reply would exceed max_frame_bytes (4096 bytes)"));
    /* The logs kept what room there is. */
    assert_true(strlen(msg_get_string(r, "logs", "")) > 3000);
}

static void
test_worker_result_shape(void **state)
{
    (void) state;
    /* A worker's result: no "ok", no error code, error null when the outcome is ok. */
    _cleanup_free_ char *big = repeat('x', 5000);
    _cleanup_json_ cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "outcome", "ok");
    cJSON_AddStringToObject(r, "output", big);
    cJSON_AddNullToObject(r, "output_repr");
    cJSON_AddStringToObject(r, "logs", "");
    cJSON_AddNullToObject(r, "error");
    assert_int_equal(msg_fit_exec_reply(r, 1024, "the worker channel's frame"), 0);
    assert_false(cJSON_HasObjectItem(r, "ok"));
    assert_string_equal(msg_get_string(r, "outcome", ""), "output_limit");
    cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
    assert_true(cJSON_IsObject(e));
    assert_false(cJSON_HasObjectItem(e, "code"));
    assert_non_null(strstr(msg_get_string(e, "message", ""), "the worker channel's frame"));
}

static void
test_reply_that_cannot_fit_stays_valid(void **state)
{
    (void) state;
    /* The part that cannot be cut (a long id) is over the limit on its own. */
    _cleanup_free_ char *logs = repeat('l', 100);
    _cleanup_free_ char *id = repeat('i', 300);
    _cleanup_json_ cJSON *r = reply_with(logs, "message", NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(r, "id", cJSON_CreateString(id));
    assert_int_equal(msg_fit_exec_reply(r, 200, "max_frame_bytes"), -1);
    assert_string_equal(msg_get_string(r, "logs", ""), logs);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(r, "error");
    assert_string_equal(msg_get_string(e, "message", ""), "message");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_json_size_counts_escapes),
            cmocka_unit_test(test_prefix_and_suffix_keep_whole_characters),
            cmocka_unit_test(test_cut_keeps_head_and_tail_within_budget),
            cmocka_unit_test(test_reply_that_fits_is_unchanged),
            cmocka_unit_test(test_texts_are_cut_before_the_result_goes),
            cmocka_unit_test(test_small_texts_keep_their_share),
            cmocka_unit_test(test_result_too_large_for_any_cut_is_left_out),
            cmocka_unit_test(test_worker_result_shape),
            cmocka_unit_test(test_reply_that_cannot_fit_stays_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
