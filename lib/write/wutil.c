/* Helpers shared by the writers; see wutil.h. */
#include "util/text.h"
#include "write/wutil.h"

#include <errno.h>
#include <string.h>

const char *tk_wu_display_unit(tk_unit u)
{
	return u == TK_UNIT_NS ? "ms" : tk_unit_name(u);
}

void tk_wu_decimal(char *buf, size_t cap, uint64_t w, unsigned d)
{
	uint64_t m = 1;
	for (unsigned i = 0; i < d && i < 19; i++)
		m *= 10;
	uint64_t ip = w / m, f = w % m;
	if (!f) {
		snprintf(buf, cap, "%llu", (unsigned long long)ip);
		return;
	}
	while (f % 10 == 0)
		f /= 10, d--;
	snprintf(buf, cap, "%llu.%0*llu", (unsigned long long)ip, (int)d, (unsigned long long)f);
}

void tk_wu_weight(char *buf, size_t cap, tk_unit u, unsigned d, uint64_t w)
{
	if (d) {
		tk_wu_decimal(buf, cap, w, d);
		return;
	}
	if (u == TK_UNIT_NS) { /* integer arithmetic: a double would round large totals */
		uint64_t hundredths = w / 10000 + (w % 10000 >= 5000);
		snprintf(buf, cap, "%llu.%02llu", (unsigned long long)(hundredths / 100),
		         (unsigned long long)(hundredths % 100));
	} else
		snprintf(buf, cap, "%llu", (unsigned long long)w);
}

double tk_wu_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void tk_wu_json_string(FILE *out, const char *s)
{
	tk_json_fput(out, s);
}

int tk_wu_finish(FILE *out, const char *what, tk_error *err)
{
	if (fflush(out) != 0 || ferror(out))
		return tk_error_set(err, "%s: write error: %s", what, strerror(errno ? errno : EIO));
	return 0;
}
