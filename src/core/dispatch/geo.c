/* Great-circle distances and the grid of cells (geo.h). */
#include "core/dispatch/geo.h"

#include <math.h>

#define PI 3.14159265358979323846
#define RADIANS(degrees) ((degrees) * (PI / 180.0))
#define DEGREES(radians) ((radians) * (180.0 / PI))
/* A cell's height in degrees of latitude. */
#define CELL_DEGREES DEGREES(HF_GEO_CELL_M / HF_GEO_EARTH_RADIUS_M)
/* Spans are widened by this many metres, so that floating point's last bits in asin, cos and
 * the division by a cell's width never leave out a cell that holds a point at exactly the
 * distance asked (a driver at exactly radius_m is inside). */
#define SPAN_MARGIN_M 1.0

double hf_geo_distance_m(double lat1, double lng1, double lat2, double lng2) {
    double half_lat = RADIANS(lat2 - lat1) / 2, half_lng = RADIANS(lng2 - lng1) / 2;
    double s_lat = sin(half_lat), s_lng = sin(half_lng);
    double a = s_lat * s_lat + cos(RADIANS(lat1)) * cos(RADIANS(lat2)) * s_lng * s_lng;
    if (a > 1) a = 1;
    return 2 * HF_GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

int64_t hf_geo_distance_whole_m(double lat1, double lng1, double lat2, double lng2) {
    return (int64_t)floor(hf_geo_distance_m(lat1, lng1, lat2, lng2) + 0.5);
}

int32_t hf_geo_rows(void) { return (int32_t)ceil(180.0 / CELL_DEGREES); }

static int32_t row_of(double lat) {
    int32_t row = (int32_t)floor((lat + 90.0) / CELL_DEGREES);
    int32_t rows = hf_geo_rows();
    if (row < 0) return 0;
    return row >= rows ? rows - 1 : row;
}

int32_t hf_geo_row_columns(int32_t row) {
    double south = -90.0 + row * CELL_DEGREES, north = south + CELL_DEGREES;
    if (north > 90.0) north = 90.0;
    /* The row's widest latitude: the one nearest the equator. */
    double widest = south <= 0 && north >= 0 ? 0 : fmin(fabs(south), fabs(north));
    double columns = floor(360.0 * cos(RADIANS(widest)) / CELL_DEGREES);
    return columns < 1 ? 1 : (int32_t)columns;
}

static int32_t modulo(int64_t value, int32_t count) {
    int64_t rest = value % count;
    return (int32_t)(rest < 0 ? rest + count : rest);
}

static int64_t column_unwrapped(double lng, int32_t columns) {
    return (int64_t)floor((lng + 180.0) / (360.0 / columns));
}

void hf_geo_cell_of(double lat, double lng, int32_t *row, int32_t *column) {
    *row = row_of(lat);
    int32_t columns = hf_geo_row_columns(*row);
    *column = modulo(column_unwrapped(lng, columns), columns);
}

/* The latitude band is that of the cap of angular radius delta; the longitude band is the
 * widest the cap reaches, asin(sin(delta) / cos(lat)), unless the cap holds a pole, when every
 * longitude is in it. */
void hf_geo_span_of(double lat, double lng, double distance_m, hf_geo_span_t *span) {
    *span = (hf_geo_span_t){.lng = lng, .empty = distance_m < 0};
    if (span->empty) return;
    double delta = (distance_m + SPAN_MARGIN_M) / HF_GEO_EARTH_RADIUS_M;
    double south = lat - DEGREES(delta), north = lat + DEGREES(delta);
    span->row_first = row_of(south < -90.0 ? -90.0 : south);
    span->row_last = row_of(north > 90.0 ? 90.0 : north);
    span->every_column = south <= -90.0 || north >= 90.0 || delta >= PI / 2;
    if (span->every_column) return;
    double reach = sin(delta) / cos(RADIANS(lat));
    if (reach >= 1) {
        span->every_column = true;
        return;
    }
    span->lng_half = DEGREES(asin(reach));
    if (span->lng_half >= 180.0) span->every_column = true;
}

void hf_geo_span_columns(const hf_geo_span_t *span, int32_t row, int32_t *first, int32_t *count) {
    int32_t columns = hf_geo_row_columns(row);
    *first = 0;
    *count = columns;
    if (span->every_column) return;
    int64_t west = column_unwrapped(span->lng - span->lng_half, columns);
    int64_t east = column_unwrapped(span->lng + span->lng_half, columns);
    if (east - west + 1 >= columns) return;
    *first = modulo(west, columns);
    *count = (int32_t)(east - west + 1);
}

bool hf_geo_span_has(const hf_geo_span_t *span, int32_t row, int32_t column) {
    if (span->empty || row < span->row_first || row > span->row_last) return false;
    int32_t first, count;
    hf_geo_span_columns(span, row, &first, &count);
    return modulo((int64_t)column - first, hf_geo_row_columns(row)) < count;
}
