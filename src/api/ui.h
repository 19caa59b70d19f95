/* The handlers of the box-office page (API.md section 10: files of ui/, embedded in the
 * binary), and their routes. The handlers are private to their file: the dispatcher
 * (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_UI_H
#define HF_API_UI_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_ui_routes;

#endif
