/* Geometry of dispatch: great-circle distances and the grid of cells the drivers' index
 * (core/dispatch/) files drivers under. Pure functions of their arguments.
 *
 * Distances are haversine on a sphere of the Earth's mean radius, in metres: what a rider
 * and a driver understand by "how far", near the poles and across the antimeridian alike
 * (degrees are never compared as distances).
 *
 * The grid: rows of equal latitude height (HF_GEO_CELL_M), each row cut into as many columns
 * as fit HF_GEO_CELL_M wide at the row's widest latitude, so a cell is never narrower than
 * HF_GEO_CELL_M and a row near a pole has few columns (the polar rows have one). A cell is
 * named by (row, column). The cells that can hold a point within distance d of a point are a
 * span: rows of the latitude band, and in each row the columns of a band of longitude, which
 * is every column once the cap of radius d reaches a pole (hf_geo_span_of). Spans grow with d
 * without moving, so a search widens its span ring by ring and reads each cell once. */
#ifndef HF_CORE_DISPATCH_GEO_H
#define HF_CORE_DISPATCH_GEO_H

#include <stdbool.h>
#include <stdint.h>

/* The mean radius of the Earth (IUGG), metres. */
#define HF_GEO_EARTH_RADIUS_M 6371008.8
/* A cell's height and least width. Fixed rather than sized to each ride's radius: one index
 * per fleet serves rides of every radius. 250 m keeps a dense city's cell small (100,000
 * drivers over 900 km^2 is about 7 drivers a cell, so the nearest driver is usually found
 * in the first 3 x 3 cells), while the default 3 km radius still spans only about 25 x 25
 * cells for a fleet too sparse to stop sooner. */
#define HF_GEO_CELL_M 250.0

/* Great-circle distance in metres (haversine), exact to floating point. */
double hf_geo_distance_m(double lat1, double lng1, double lat2, double lng2);
/* The same rounded to whole metres (half up): what rides rank and show. */
int64_t hf_geo_distance_whole_m(double lat1, double lng1, double lat2, double lng2);

/* The cell of a point (lat in [-90, 90], lng in [-180, 180]). */
void hf_geo_cell_of(double lat, double lng, int32_t *row, int32_t *column);
/* Columns of a row. */
int32_t hf_geo_row_columns(int32_t row);
/* Rows of the grid. */
int32_t hf_geo_rows(void);

/* The cells that can hold a point within distance_m of (lat, lng), with a margin for
 * rounding: rows row_first..row_last, and in each row the columns hf_geo_span_columns says. */
typedef struct hf_geo_span {
    int32_t row_first, row_last;
    double lng;        /* the centre's longitude */
    double lng_half;   /* the band's half width, degrees */
    bool every_column; /* the cap reaches a pole, or the band goes all around */
    bool empty;        /* no cell at all (a negative distance) */
} hf_geo_span_t;

void hf_geo_span_of(double lat, double lng, double distance_m, hf_geo_span_t *span);
/* The span's columns in row: count columns from first on, wrapping past the last column to
 * column 0 (count is the row's column count when every column is in). */
void hf_geo_span_columns(const hf_geo_span_t *span, int32_t row, int32_t *first, int32_t *count);
/* Whether the span holds the cell (row, column). */
bool hf_geo_span_has(const hf_geo_span_t *span, int32_t row, int32_t column);

#endif
