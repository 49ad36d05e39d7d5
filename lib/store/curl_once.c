/*
 * libcurl's global set-up, once per process whichever thread asks first. curl_global_init is not
 * thread-safe, and `serve` (several workers), the ClickHouse backend and the uploader may each be
 * the first to need curl: a plain "static int inited" flag would race between them.
 */
#include <pthread.h>

#include <curl/curl.h>

#include "store/internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode init_result = CURLE_FAILED_INIT;

static void init(void)
{
	init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int tk_store_curl_init(void)
{
	pthread_once(&once, init);
	return init_result == CURLE_OK ? 0 : -1;
}
